import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestApiServer, startApiServer } from "../../../test/api-server";
import { hostDetail, user } from "../../../test/factories";
import { renderApp } from "../../../test/render-app";
import { analysis, finding, hostConfig } from "../test/factories";

let server: TestApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "operator" }) });
  server.reply("GET", "/api/v1/hosts/7", { status: 200, body: hostDetail({ id: 7, hostname: "edge-7" }) });
  server.reply("GET", "/api/v1/hosts/7/config", { status: 200, body: hostConfig() });
  server.reply("GET", "/api/v1/acks", { status: 200, body: [] });
});

function codeLine(line: number): HTMLElement {
  const row = document.querySelector<HTMLElement>(`.code-line[data-line="${line}"]`);
  if (!row) throw new Error(`line ${line} is not shown`);
  return row;
}

describe("config tab", () => {
  it("shows the score, the files and a marker at the finding's line that opens its detail", async () => {
    renderApp("/hosts/7/config", server.origin);
    expect(await screen.findByRole("group", { name: "config score" })).toHaveTextContent("81");
    const files = screen.getByRole("navigation", { name: "config files" });
    expect(
      within(files).getByRole("button", { name: "/etc/nginx/nginx.conf, 7 lines, 2 findings" }),
    ).toBeInTheDocument();
    expect(codeLine(3)).toHaveTextContent("worker_connections 768;");
    expect(codeLine(3).querySelector(".line-number")).toHaveTextContent("3");

    await userEvent.click(within(codeLine(3)).getByRole("button", { name: /warning at line 3: W-connections/ }));
    expect(codeLine(3)).toHaveClass("selected");
    const detail = screen.getByRole("article", { name: "selected finding" });
    expect(detail).toHaveTextContent("raise worker_connections to 4096");
    expect(detail).toHaveTextContent("Set worker_connections 4096; in events (nginx.conf line 3)");
    expect(within(detail).getByRole("link", { name: "nginx documentation" })).toHaveAttribute(
      "href",
      "https://nginx.org/en/docs/ngx_core_module.html#worker_connections",
    );
  });

  it("opens the finding a link names (?finding=KEY) at its line", async () => {
    const gzip = finding({ id: 2, rule: "C-gzip", severity: "info", category: "compression", line: 6 });
    server.reply("GET", "/api/v1/hosts/7/config", {
      status: 200,
      body: hostConfig({ analysis: analysis([finding(), gzip]) }),
    });
    renderApp(`/hosts/7/config?finding=${encodeURIComponent(gzip.key)}`, server.origin);
    const detail = await screen.findByRole("article", { name: "selected finding" });
    expect(within(detail).getByRole("heading", { name: "C-gzip" })).toBeInTheDocument();
    expect(codeLine(6)).toHaveClass("selected");
  });

  it("says in which blocks a finding is", async () => {
    const nested = finding({
      id: 3,
      rule: "X-autoindex",
      category: "security",
      line: 5,
      place: "http/server[example.com]/location[/static/]",
      directive: "autoindex",
      message: "directory listing is on",
    });
    server.reply("GET", "/api/v1/hosts/7/config", { status: 200, body: hostConfig({ analysis: analysis([nested]) }) });
    renderApp("/hosts/7/config", server.origin);
    const row = await screen.findByRole("button", { name: /X-autoindex.*directory listing/ });
    expect(row).toHaveAttribute("title", "in server example.com › location /static/");
    await userEvent.click(row);
    const detail = screen.getByRole("article", { name: "selected finding" });
    expect(within(detail).getByLabelText("place")).toHaveTextContent("in server example.com › location /static/");
  });

  it("filters the findings list by severity", async () => {
    renderApp("/hosts/7/config", server.origin);
    const list = await screen.findByRole("region", { name: "findings" });
    expect(within(list).getByRole("region", { name: "category compression" })).toBeInTheDocument();
    await userEvent.click(within(list).getByRole("button", { name: "info (1)" }));
    expect(within(list).queryByRole("region", { name: "category compression" })).toBeNull();
    expect(within(list).getByRole("region", { name: "category workers" })).toBeInTheDocument();
    // The marker of the hidden info finding goes too.
    expect(within(codeLine(6)).queryByRole("button")).toBeNull();
  });

  it("acknowledges a finding with a reason and sends the contract's body", async () => {
    server.reply("POST", "/api/v1/acks", {
      status: 201,
      body: {
        id: 5,
        rule: "W-connections",
        host_id: 7,
        finding_key: finding().key,
        reason: "sized for the box",
        created_by: "alice",
        created_at: "2026-11-21T10:00:00Z",
        expires_at: null,
      },
    });
    renderApp("/hosts/7/config", server.origin);
    await userEvent.click(await screen.findByRole("button", { name: /W-connections.*raise worker_connections/ }));
    await userEvent.click(screen.getByRole("button", { name: "Acknowledge" }));
    const form = screen.getByRole("form", { name: "acknowledge finding" });
    await userEvent.click(within(form).getByRole("button", { name: "Mute finding" }));
    expect(within(form).getByRole("alert")).toHaveTextContent("at least 3 characters");
    expect(server.requests.some((r) => r.method === "POST")).toBe(false);

    await userEvent.type(within(form).getByLabelText("Reason"), "sized for the box");
    await userEvent.click(within(form).getByRole("button", { name: "Mute finding" }));
    await waitFor(() => expect(server.requests.some((r) => r.method === "POST")).toBe(true));
    const post = server.requests.find((r) => r.method === "POST");
    expect(post?.headers["x-csrf-token"]).toBe("test-csrf");
    expect(JSON.parse(post?.body ?? "{}")).toEqual({
      rule: "W-connections",
      host_id: 7,
      finding_key: finding().key,
      reason: "sized for the box",
      expires_at: null,
    });
  });

  it("shows a muted finding with its reason and unmutes it", async () => {
    const muted = finding({ muted: true, ack_id: 5 });
    server.reply("GET", "/api/v1/hosts/7/config", { status: 200, body: hostConfig({ analysis: analysis([muted]) }) });
    server.reply("GET", "/api/v1/acks", {
      status: 200,
      body: [
        {
          id: 5,
          rule: "W-connections",
          host_id: 7,
          finding_key: muted.key,
          reason: "sized for the box",
          created_by: "alice",
          created_at: "2026-11-21T10:00:00Z",
          expires_at: null,
        },
      ],
    });
    server.reply("DELETE", "/api/v1/acks/5", { status: 204 });
    renderApp("/hosts/7/config", server.origin);
    const list = await screen.findByRole("region", { name: "findings" });
    expect(within(list).queryByRole("button", { name: /W-connections/ })).toBeNull();
    await userEvent.click(within(list).getByLabelText("show muted"));
    await userEvent.click(within(list).getByRole("button", { name: /W-connections/ }));
    const detail = screen.getByRole("article", { name: "selected finding" });
    expect(detail).toHaveTextContent("“sized for the box”");
    await userEvent.click(within(detail).getByRole("button", { name: "Unmute" }));
    await waitFor(() =>
      expect(server.requests.some((r) => r.method === "DELETE" && r.url === "/api/v1/acks/5")).toBe(true),
    );
  });

  it("does not offer acknowledging to a viewer", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer" }) });
    renderApp("/hosts/7/config", server.origin);
    await userEvent.click(await screen.findByRole("button", { name: /W-connections.*raise worker_connections/ }));
    expect(screen.getByRole("article", { name: "selected finding" })).toHaveTextContent("raise worker_connections");
    expect(screen.queryByRole("button", { name: "Acknowledge" })).toBeNull();
  });

  it("says when the agent has not sent its configuration, or the analysis is pending or failed", async () => {
    server.reply("GET", "/api/v1/hosts/7/config", {
      status: 200,
      body: hostConfig({ snapshot: null, files: [], analysis: null }),
    });
    const first = renderApp("/hosts/7/config", server.origin);
    expect(await screen.findByText(/The agent has not sent its configuration yet/)).toBeInTheDocument();
    first.unmount();

    server.reply("GET", "/api/v1/hosts/7/config", { status: 200, body: hostConfig({ analysis: null }) });
    const second = renderApp("/hosts/7/config", server.origin);
    expect(await screen.findByText(/Analysis pending/)).toBeInTheDocument();
    expect(codeLine(3)).toHaveTextContent("worker_connections 768;");
    second.unmount();

    server.reply("GET", "/api/v1/hosts/7/config", {
      status: 200,
      body: hostConfig({
        analysis: analysis([], { status: "failed", score: null, error: "parser crashed on line 3" }),
      }),
    });
    renderApp("/hosts/7/config", server.origin);
    expect(await screen.findByRole("alert")).toHaveTextContent("parser crashed on line 3");
  });
});
