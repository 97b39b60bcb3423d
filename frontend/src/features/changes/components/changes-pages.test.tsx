import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestApiServer, startApiServer } from "../../../test/api-server";
import { fleetPage, hostDetail, series, seriesPoint, user } from "../../../test/factories";
import { renderApp } from "../../../test/render-app";
import { change, rollout } from "../test/factories";

let server: TestApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "operator", username: "olga" }) });
  server.reply("GET", "/api/v1/hosts/7", {
    status: 200,
    body: hostDetail({ id: 7, hostname: "edge-7", apply_allowed: true }),
  });
  server.reply("GET", "/api/v1/changes", {
    status: 200,
    body: {
      items: [
        change({
          id: 6,
          kind: "rollback",
          reverts_change_id: 5,
          status: "applying",
          step: "reload",
          title: "roll back change 5: C-gzip: set gzip on",
        }),
        change({ id: 5, status: "verified", approved_by: "ann", approved_at: "2026-11-21T10:01:00Z", rollout_id: 3 }),
      ],
      total: 2,
    },
  });
  server.reply("GET", "/api/v1/rollouts", { status: 200, body: [rollout()] });
});

function gets(path: string): string[] {
  return server.requests.filter((r) => r.method === "GET" && r.url.startsWith(path)).map((r) => r.url);
}

describe("changes of a host", () => {
  it("lists the host's changes newest first on its Changes tab, with their status", async () => {
    renderApp("/hosts/7/changes", server.origin);
    const table = await screen.findByRole("table", { name: "host changes" });
    const rows = within(table).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("#6");
    expect(rows[1]).toHaveTextContent("rollback roll back change 5");
    expect(rows[1]).toHaveTextContent("applying · reload");
    expect(rows[2]).toHaveTextContent("verified");
    expect(rows[2]).toHaveTextContent("ann");
    expect(within(rows[2]!).getByRole("link", { name: "#5" })).toHaveAttribute("href", "/changes/5");
    expect(gets("/api/v1/changes")).toContain("/api/v1/changes?host_id=7&limit=100");
    const tabs = screen.getByRole("navigation", { name: "host views" });
    expect(within(tabs).getByRole("link", { name: "Changes" })).toHaveClass("active");
  });

  it("marks the host's applied changes under its charts", async () => {
    server.reply("GET", "/api/v1/hosts/7/series", {
      status: 200,
      body: series([seriesPoint({ ts: "2026-11-21T09:50:00Z" }), seriesPoint({ ts: "2026-11-21T09:55:00Z" })], {
        host_id: 7,
      }),
    });
    server.reply("GET", "/api/v1/hosts/7/scores", { status: 200, body: { points: [] } });
    server.reply("GET", "/api/v1/changes", {
      status: 200,
      body: {
        items: [
          change({ id: 8, status: "refused", finished_at: "2026-11-21T09:52:00Z" }),
          change({ id: 5, status: "verified", finished_at: "2026-11-21T09:51:00Z" }),
          change({ id: 4, status: "verified", finished_at: "2026-11-21T08:00:00Z" }),
        ],
        total: 3,
      },
    });
    renderApp("/hosts/7?range=15m", server.origin);
    const marks = await screen.findByRole("list", { name: "changes on the charts" });
    const items = within(marks).getAllByRole("listitem");
    expect(items).toHaveLength(1);
    expect(within(items[0]!).getByRole("link", { name: "change 5" })).toHaveAttribute("href", "/changes/5");
    expect(items[0]).toHaveTextContent("2026-11-21 09:51:00 · C-gzip: set gzip on");
  });
});

describe("fleet-wide changes", () => {
  it("lists rollouts with their progress and every change, from the main navigation", async () => {
    renderApp("/", server.origin);
    server.reply("GET", "/api/v1/fleet", { status: 200, body: fleetPage([]) });
    server.reply("GET", "/api/v1/fleet/labels", { status: 200, body: {} });
    const nav = await screen.findByRole("navigation", { name: "main" });
    await userEvent.click(within(nav).getByRole("link", { name: "Changes" }));
    const rollouts = await screen.findByRole("table", { name: "rollouts" });
    expect(within(rollouts).getAllByRole("row")[1]).toHaveTextContent(
      "#3C-gzipenv=prod1 of 3 applied · 1 skippedrunning",
    );
    const changes = await screen.findByRole("table", { name: "changes" });
    expect(within(changes).getAllByRole("link", { name: "edge-7" })[0]).toHaveAttribute("href", "/hosts/7/changes");
    expect(within(changes).getByRole("link", { name: "rollout 3" })).toHaveAttribute("href", "/rollouts/3");

    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Status" }), "verified");
    await waitFor(() => expect(gets("/api/v1/changes")).toContain("/api/v1/changes?status=verified&limit=100"));
  });

  it("starts a rollout of a rule from the top findings page, with the form pre-filled", async () => {
    server.reply("GET", "/api/v1/findings/top", {
      status: 200,
      body: [
        {
          rule: "C-gzip",
          severity: "info",
          category: "compression",
          hosts: 3,
          findings: 3,
          example_message: "gzip is off",
          doc_url: "https://nginx.org/en/docs/http/ngx_http_gzip_module.html#gzip",
        },
      ],
    });
    server.reply("POST", "/api/v1/rollouts", { status: 201, body: rollout() });
    server.reply("GET", "/api/v1/rollouts/3", { status: 200, body: rollout() });
    const { router } = renderApp("/findings", server.origin);
    await userEvent.click(await screen.findByRole("link", { name: "roll out the fix of C-gzip" }));
    expect(router.state.location.search).toBe("?rule=C-gzip");
    const form = await screen.findByRole("form", { name: "new rollout" });
    expect(within(form).getByRole("textbox", { name: /^Rule/ })).toHaveValue("C-gzip");

    const canary = within(form).getByRole("textbox", { name: /^Canary hosts/ });
    await userEvent.clear(canary);
    await userEvent.type(canary, "0");
    await userEvent.click(within(form).getByRole("button", { name: "Start rollout" }));
    expect(within(form).getByRole("alert")).toHaveTextContent("the canary count must be between 1 and 10");
    expect(server.requests.some((r) => r.method === "POST")).toBe(false);

    await userEvent.clear(canary);
    await userEvent.type(canary, "1");
    await userEvent.type(within(form).getByRole("textbox", { name: /^Hosts with labels/ }), "env=prod");
    await userEvent.click(within(form).getByRole("checkbox", { name: /Roll a host back automatically/ }));
    await userEvent.type(within(form).getByRole("textbox", { name: /^Max rise of nginx workers' CPU/ }), "50");
    const watch = within(form).getByRole("textbox", { name: /^Watch each host for/ });
    await userEvent.clear(watch);
    await userEvent.type(watch, "120");
    await userEvent.click(within(form).getByRole("button", { name: "Start rollout" }));

    await waitFor(() => expect(router.state.location.pathname).toBe("/rollouts/3"));
    const post = server.requests.find((r) => r.method === "POST" && r.url === "/api/v1/rollouts");
    expect(JSON.parse(post?.body ?? "{}")).toEqual({
      rule: "C-gzip",
      labels: { env: ["prod"] },
      canary: 1,
      batch_size: 5,
      auto_rollback: { drops: true, max_rise_pct: { worker_cpu_pct: 50 }, checks: 3, watch_s: 120 },
      comment: "",
    });
  });

  it("says why the API refuses a rollout", async () => {
    server.reply("POST", "/api/v1/rollouts", {
      status: 422,
      body: { detail: "no matching host has a fix of Z-none to apply (3 skipped)" },
    });
    renderApp("/rollouts/new?rule=Z-none", server.origin);
    const form = await screen.findByRole("form", { name: "new rollout" });
    await userEvent.click(within(form).getByRole("button", { name: "Start rollout" }));
    expect(await within(form).findByRole("alert")).toHaveTextContent(
      "Could not start the rollout: no matching host has a fix of Z-none to apply (3 skipped)",
    );
  });

  it("shows a rollout's hosts by wave, the skipped ones with why, and why it stopped", async () => {
    server.reply("GET", "/api/v1/rollouts/3", {
      status: 200,
      body: rollout({
        status: "stopped",
        stop_reason: "edge-8: change 6 rolled_back at step test: nginx: [emerg] unknown directive",
        auto_rollback: { drops: true, max_rise_pct: { worker_cpu_pct: 50 }, checks: 3, watch_s: 300 },
      }),
    });
    renderApp("/rollouts/3", server.origin);
    expect(await screen.findByRole("heading", { name: "Rollout 3: C-gzip" })).toBeInTheDocument();
    expect(screen.getByRole("alert")).toHaveTextContent("Stopped: edge-8: change 6 rolled_back at step test");
    const canary = screen.getByRole("region", { name: "canary" });
    expect(canary).toHaveTextContent("edge-7 verified change 5");
    const wave = screen.getByRole("region", { name: "wave 1" });
    expect(within(wave).getAllByRole("listitem").map((li) => li.textContent)).toEqual([
      "edge-8 approved change 6",
      "edge-9 approved change 7",
    ]);
    expect(screen.getByRole("region", { name: "skipped hosts" })).toHaveTextContent(
      "edge-10: read-only: its agent does not allow applying changes",
    );
    expect(screen.getByText(/worker_cpu_pct rising > 50%/)).toBeInTheDocument();
  });

  it("offers a viewer no rollout, on the changes page, the top findings or the form", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer" }) });
    server.reply("GET", "/api/v1/findings/top", { status: 200, body: [] });
    const first = renderApp("/changes", server.origin);
    expect(await screen.findByRole("table", { name: "rollouts" })).toBeInTheDocument();
    expect(screen.queryByRole("link", { name: "New rollout" })).toBeNull();
    first.unmount();

    renderApp("/rollouts/new?rule=C-gzip", server.origin);
    expect(await screen.findByText("You need the operator role to view this page.")).toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "new rollout" })).toBeNull();
  });
});
