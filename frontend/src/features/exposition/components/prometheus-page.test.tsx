import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type TestApiServer, startApiServer } from "../../../test/api-server";
import { user } from "../../../test/factories";
import { renderApp } from "../../../test/render-app";

let server: TestApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "admin", username: "root" }) });
});

const posts = () => server.requests.filter((r) => r.method === "POST" && r.url === "/api/v1/metrics-token");

describe("Settings → Prometheus", () => {
  it("creates the token and shows it once, with a scrape config that uses it", async () => {
    server.reply("GET", "/api/v1/metrics-token", { status: 200, body: { set: false, created_at: null } });
    server.reply("POST", "/api/v1/metrics-token", { status: 201, body: { token: "nfm_secret" } });
    renderApp("/settings/prometheus", server.origin);
    const nav = await screen.findByRole("navigation", { name: "main" });
    expect(within(nav).getByRole("link", { name: "Prometheus" })).toHaveAttribute("href", "/settings/prometheus");
    expect(await screen.findByLabelText("metrics token state")).toHaveTextContent("No token is set");

    server.reply("GET", "/api/v1/metrics-token", { status: 200, body: { set: true, created_at: "2026-11-21T10:00:00Z" } });
    await userEvent.click(screen.getByRole("button", { name: "Create token" }));
    const created = await screen.findByLabelText("new metrics token");
    expect(within(created).getByRole("alert")).toHaveTextContent("shown only once");
    expect(within(created).getByLabelText("Token")).toHaveTextContent("nfm_secret");
    const config = within(created).getByLabelText("prometheus.yml");
    expect(config).toHaveTextContent("authorization: credentials: nfm_secret");
    expect(config).toHaveTextContent("metrics_path: /metrics");
    expect(within(created).getByRole("button", { name: "Copy the token" })).toBeInTheDocument();
    expect(posts()).toHaveLength(1);

    await userEvent.click(within(created).getByRole("button", { name: "Done" }));
    expect(screen.queryByText(/nfm_secret/)).toBeNull();
    expect(await screen.findByLabelText("metrics token state")).toHaveTextContent(
      "A token is set (created 2026-11-21 10:00:00).",
    );
  });

  it("asks before rotating or deleting a token that is set", async () => {
    server.reply("GET", "/api/v1/metrics-token", { status: 200, body: { set: true, created_at: "2026-11-21T10:00:00Z" } });
    server.reply("DELETE", "/api/v1/metrics-token", { status: 204 });
    const confirm = vi.spyOn(window, "confirm").mockReturnValue(false);
    renderApp("/settings/prometheus", server.origin);
    await userEvent.click(await screen.findByRole("button", { name: "Rotate token" }));
    expect(confirm).toHaveBeenCalledTimes(1);
    expect(posts()).toHaveLength(0);

    confirm.mockReturnValue(true);
    await userEvent.click(screen.getByRole("button", { name: "Delete token" }));
    await waitFor(() =>
      expect(server.requests.some((r) => r.method === "DELETE" && r.url === "/api/v1/metrics-token")).toBe(true),
    );
  });

  it("is an admin page", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "operator" }) });
    renderApp("/settings/prometheus", server.origin);
    expect(await screen.findByText("You need the admin role to view this page.")).toBeInTheDocument();
    expect(server.requests.some((r) => r.url.startsWith("/api/v1/metrics-token"))).toBe(false);
  });
});
