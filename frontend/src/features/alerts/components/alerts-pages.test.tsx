import { focusManager } from "@tanstack/react-query";
import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type TestApiServer, startApiServer } from "../../../test/api-server";
import { hostDetail, series, user } from "../../../test/factories";
import { renderApp } from "../../../test/render-app";
import { SIGNALS, channel, delivery, incident, incidentDetail, preview, rule, silence } from "../test/factories";

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
  server.reply("GET", "/api/v1/alerts/summary", {
    status: 200,
    body: { firing: 1, pending: 0, by_severity: { critical: 1, warning: 0, info: 0 } },
  });
  server.reply("GET", "/api/v1/alerts/incidents", { status: 200, body: { items: [], next_before_id: null } });
  server.reply("GET", "/api/v1/alerts/rules", { status: 200, body: [rule()] });
  server.reply("GET", "/api/v1/alerts/signals", { status: 200, body: SIGNALS });
  server.reply("GET", "/api/v1/alerts/channels", { status: 200, body: [channel()] });
  server.reply("GET", "/api/v1/alerts/silences", { status: 200, body: [] });
});
afterEach(() => {
  focusManager.setFocused(undefined);
});

function requestsTo(method: string, path: string) {
  return server.requests.filter((r) => r.method === method && r.url.split("?")[0] === path);
}

function bodiesOf(method: string, path: string): unknown[] {
  return requestsTo(method, path).map((r) => JSON.parse(r.body) as unknown);
}

describe("nav badge", () => {
  it("shows the firing count with an accessible label, and refetches it when the window gets the focus", async () => {
    server.reply("GET", "/api/v1/alerts/summary", {
      status: 200,
      body: { firing: 3, pending: 1, by_severity: { critical: 2, warning: 1, info: 0 } },
    });
    renderApp("/alerts", server.origin);
    const nav = await screen.findByRole("navigation", { name: "main" });
    const badge = await within(nav).findByRole("img", { name: "3 firing" });
    expect(badge).toHaveTextContent("3");
    expect(within(nav).getByRole("link", { name: "Alerts 3 firing" })).toHaveAttribute("href", "/alerts");

    server.reply("GET", "/api/v1/alerts/summary", {
      status: 200,
      body: { firing: 5, pending: 0, by_severity: { critical: 0, warning: 5, info: 0 } },
    });
    focusManager.setFocused(false);
    focusManager.setFocused(true);
    expect(await within(nav).findByRole("img", { name: "5 firing" })).toHaveClass("nav-badge-warning");
  });

  it("shows no badge when nothing fires", async () => {
    server.reply("GET", "/api/v1/alerts/summary", {
      status: 200,
      body: { firing: 0, pending: 2, by_severity: { critical: 0, warning: 0, info: 0 } },
    });
    renderApp("/alerts", server.origin);
    expect(await screen.findByLabelText("alert summary")).toHaveTextContent("0 firing · 2 pending");
    const nav = screen.getByRole("navigation", { name: "main" });
    expect(within(nav).getByRole("link", { name: "Alerts" })).toBeInTheDocument();
    expect(within(nav).queryByRole("img")).toBeNull();
  });

  it("shows no badge, and no error in the navigation, when the count cannot be read", async () => {
    server.reply("GET", "/api/v1/alerts/summary", { status: 500, body: { detail: "database unavailable" } });
    renderApp("/alerts", server.origin);
    expect(await screen.findByText("Nothing is firing")).toBeInTheDocument();
    await waitFor(() => expect(requestsTo("GET", "/api/v1/alerts/summary").length).toBeGreaterThan(0));
    const nav = screen.getByRole("navigation", { name: "main" });
    expect(within(nav).getByRole("link", { name: "Alerts" })).toBeInTheDocument();
    expect(within(nav).queryByRole("img")).toBeNull();
    expect(within(nav).queryByRole("alert")).toBeNull();
  });
});

describe("firing", () => {
  it("lists active incidents newest first, each with its cause and the finding that fixes it", async () => {
    server.reply("GET", "/api/v1/alerts/incidents", {
      status: 200,
      body: {
        items: [
          incident({
            id: 5,
            rule_name: "Certificate expires soon",
            severity: "warning",
            hostname: "web-1",
            host_id: 1,
            started_at: "2026-11-21T08:00:00Z",
            state: "pending",
            value: 9,
            unit: "days",
            cause: null,
            finding: null,
            summary: null,
            silenced_by: 4,
          }),
          incident(),
        ],
        next_before_id: null,
      },
    });
    renderApp("/alerts", server.origin);
    const list = await screen.findByRole("list", { name: "active incidents" });
    const cards = within(list).getAllByRole("article");
    expect(cards.map((c) => c.getAttribute("aria-label"))).toEqual([
      "Dropped connections on edge-drops",
      "Certificate expires soon on web-1",
    ]);
    const drops = cards[0] as HTMLElement;
    const cause = within(drops).getByRole("region", { name: "cause" });
    expect(within(cause).getByText("worker_connections exhausted")).toHaveClass("cause-title");
    expect(cause).toHaveTextContent("reported 'worker_connections are not enough' 37 times");
    expect(within(cause).getByRole("link", { name: "See the finding and its fix" })).toHaveAttribute(
      "href",
      "/hosts/3/config?finding=12",
    );
    expect(within(drops).getByRole("link", { name: "edge-drops" })).toHaveAttribute("href", "/hosts/3");
    expect(within(drops).getByRole("link", { name: "Dropped connections" })).toHaveAttribute("href", "/alerts/incidents/7");
    expect(within(drops).getByLabelText("value")).toHaveTextContent("412 connections");
    expect(within(drops).getByText("critical")).toBeInTheDocument();
    expect(within(drops).getByText("firing")).toBeInTheDocument();
    expect(within(drops).queryByText("silenced")).toBeNull();
    expect(within(drops).getByRole("link", { name: "Silence Dropped connections on edge-drops" })).toHaveAttribute(
      "href",
      "/alerts/silences?rule=1&host=edge-drops",
    );

    const cert = cards[1] as HTMLElement;
    expect(within(cert).getByText("silenced")).toBeInTheDocument();
    expect(within(cert).getByText("pending")).toBeInTheDocument();
    expect(within(cert).getByLabelText("value")).toHaveTextContent("9 days");
    expect(within(cert).queryByRole("region", { name: "cause" })).toBeNull();
    expect(requestsTo("GET", "/api/v1/alerts/incidents")[0]?.url).toContain("state=active");
  });

  it("says plainly when nothing is firing", async () => {
    renderApp("/alerts", server.origin);
    expect(await screen.findByText("Nothing is firing")).toBeInTheDocument();
  });

  it("offers a viewer no silence link and no Channels tab", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer", username: "vic" }) });
    server.reply("GET", "/api/v1/alerts/incidents", { status: 200, body: { items: [incident()], next_before_id: null } });
    renderApp("/alerts", server.origin);
    await screen.findByRole("list", { name: "active incidents" });
    expect(screen.queryByRole("link", { name: /^Silence .* on / })).toBeNull();
    const tabs = screen.getByRole("navigation", { name: "alert views" });
    expect(within(tabs).getAllByRole("link").map((l) => l.textContent)).toEqual([
      "Firing",
      "History",
      "Rules",
      "Silences",
    ]);
  });
});

describe("incident detail", () => {
  it("follows an incident's url to its page, with the cause and each delivery attempt", async () => {
    server.reply("GET", "/api/v1/alerts/incidents/7", {
      status: 200,
      body: incidentDetail({
        deliveries: [
          delivery(),
          delivery({
            id: 32,
            channel_name: "mail",
            kind: "email",
            status: "failed",
            attempts: [
              { n: 1, at: "2026-11-21T09:56:02Z", ok: false, status_code: null, error: "connection refused", duration_ms: 3 },
              { n: 2, at: "2026-11-21T09:57:02Z", ok: false, status_code: 554, error: "relay denied", duration_ms: 120 },
            ],
          }),
        ],
      }),
    });
    const { router } = renderApp("/alerts/7", server.origin);
    expect(await screen.findByRole("heading", { name: "Dropped connections on edge-drops", level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe("/alerts/incidents/7");
    expect(screen.getByRole("region", { name: "cause" })).toHaveTextContent("worker_connections exhausted");
    const table = screen.getByRole("table", { name: "deliveries" });
    const rows = within(table).getAllByRole("row");
    expect(rows).toHaveLength(3);
    expect(rows[1]).toHaveTextContent("ops-webhook");
    expect(rows[1]).toHaveTextContent("sent");
    expect(rows[1]).toHaveTextContent("#1 2026-11-21 09:56:02 · HTTP 200 · 35 ms");
    const attempts = within(rows[2] as HTMLElement).getByRole("list", { name: "attempts of delivery 32" });
    expect(within(attempts).getAllByRole("listitem").map((li) => li.textContent)).toEqual([
      "#1 2026-11-21 09:56:02 · 3 ms · connection refused",
      "#2 2026-11-21 09:57:02 · HTTP 554 · 120 ms · relay denied",
    ]);
  });
});

describe("history", () => {
  it("shows resolved incidents with their duration and loads older ones by next_before_id", async () => {
    const resolved = (id: number) =>
      incident({
        id,
        state: "resolved",
        started_at: "2026-11-21T08:00:00Z",
        resolved_at: "2026-11-21T09:05:30Z",
      });
    server.reply("GET", "/api/v1/alerts/incidents", { status: 200, body: { items: [resolved(9)], next_before_id: 9 } });
    renderApp("/alerts/history", server.origin);
    const table = await screen.findByRole("table", { name: "resolved incidents" });
    expect(within(table).getAllByRole("row")[1]).toHaveTextContent("1h5m");
    expect(requestsTo("GET", "/api/v1/alerts/incidents")[0]?.url).not.toContain("before_id");

    server.reply("GET", "/api/v1/alerts/incidents", { status: 200, body: { items: [resolved(4)], next_before_id: null } });
    await userEvent.click(screen.getByRole("button", { name: "Load older" }));
    await waitFor(() => expect(within(table).getAllByRole("row")).toHaveLength(3));
    const older = requestsTo("GET", "/api/v1/alerts/incidents")[1]?.url ?? "";
    expect(older).toContain("state=resolved");
    expect(older).toContain("before_id=9");
    expect(screen.queryByRole("button", { name: "Load older" })).toBeNull();
  });
});

describe("rules", () => {
  it("lists rules with their condition and channel names, with edit links for an admin", async () => {
    renderApp("/alerts/rules", server.origin);
    const table = await screen.findByRole("table", { name: "alert rules" });
    const row = within(table).getAllByRole("row")[1] as HTMLElement;
    expect(row).toHaveTextContent("> 0 over 2m for 1m");
    expect(row).toHaveTextContent("every host");
    await waitFor(() => expect(row).toHaveTextContent("ops-webhook"));
    expect(within(row).getByRole("link", { name: "Edit Dropped connections" })).toHaveAttribute("href", "/alerts/rules/1");
    expect(screen.getByRole("link", { name: "New rule" })).toBeInTheDocument();
  });

  it("gives a viewer no edit links and a read-only rule, without asking for the channels", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer", username: "vic" }) });
    server.reply("GET", "/api/v1/alerts/channels", { status: 403, body: { detail: "admin role required" } });
    server.reply("GET", "/api/v1/alerts/rules/1", { status: 200, body: rule() });
    renderApp("/alerts/rules", server.origin);
    const table = await screen.findByRole("table", { name: "alert rules" });
    expect(within(table).getAllByRole("row")[1]).toHaveTextContent("1 channel");
    expect(screen.queryByRole("link", { name: /^Edit/ })).toBeNull();
    expect(screen.queryByRole("link", { name: "New rule" })).toBeNull();

    await userEvent.click(within(table).getByRole("link", { name: "Dropped connections" }));
    expect(await screen.findByRole("heading", { name: "Dropped connections", level: 1 })).toBeInTheDocument();
    expect(screen.getByLabelText("Threshold")).toBeDisabled();
    expect(screen.queryByRole("button", { name: /Save|Delete/ })).toBeNull();
    expect(screen.queryByRole("region", { name: "preview" })).toBeNull();
    expect(requestsTo("GET", "/api/v1/alerts/channels")).toHaveLength(0);
    expect(requestsTo("POST", "/api/v1/alerts/rules/preview")).toHaveLength(0);
  });
});

describe("rule editor", () => {
  beforeEach(() => {
    server.reply("GET", "/api/v1/alerts/rules/1", { status: 200, body: rule() });
    server.reply("POST", "/api/v1/alerts/rules/preview", { status: 200, body: preview() });
  });

  it("previews the rule as typed, once typing settles, and shows which hosts match", async () => {
    renderApp("/alerts/rules/1", server.origin);
    const panel = await screen.findByRole("region", { name: "preview" });
    expect(await within(panel).findByText("2 of 12 hosts would match")).toBeInTheDocument();
    const rows = within(within(panel).getByRole("table", { name: "hosts in scope" })).getAllByRole("row");
    expect(rows.map((r) => r.textContent)).toEqual([
      "HostValueNow",
      "edge-drops412 connectionsmatches",
      "edge-25 connectionsmatches",
      "edge-30 connectionsdoes not match",
      "edge-new—no data",
    ]);
    expect(bodiesOf("POST", "/api/v1/alerts/rules/preview")).toHaveLength(1);

    server.reply("POST", "/api/v1/alerts/rules/preview", {
      status: 200,
      body: preview({ matching: 1, hosts: preview().hosts.slice(0, 1) }),
    });
    const threshold = screen.getByLabelText("Threshold");
    await userEvent.clear(threshold);
    await userEvent.type(threshold, "250");
    expect(await within(panel).findByText("1 of 12 hosts would match")).toBeInTheDocument();
    // Typed in one go: only the settled value is asked about (no preview of "", "2" or "25").
    const bodies = bodiesOf("POST", "/api/v1/alerts/rules/preview") as { threshold: number }[];
    expect(bodies.map((b) => b.threshold)).toEqual([0, 250]);
    expect(within(panel).getByText("> 250 over 2m for 1m")).toBeInTheDocument();
  });

  it("marks a bad duration at its field and asks no preview of an invalid rule", async () => {
    renderApp("/alerts/rules/1", server.origin);
    const panel = await screen.findByRole("region", { name: "preview" });
    await within(panel).findByText("2 of 12 hosts would match");
    const windowInput = screen.getByLabelText("Window");
    await userEvent.clear(windowInput);
    await userEvent.type(windowInput, "5");
    expect(windowInput).toHaveAttribute("aria-invalid", "true");
    expect(windowInput).toHaveAccessibleDescription(/Window needs a unit: 5s, 5m or 5h/);
    expect(within(panel).getByText("Fix the form to see which hosts would match.")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Save rule" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("The rule has 1 problem");
    // Past the debounce: still no preview of the invalid rule.
    await act(() => new Promise((resolve) => setTimeout(resolve, 700)));
    expect(bodiesOf("POST", "/api/v1/alerts/rules/preview")).toHaveLength(1);
    expect(requestsTo("PUT", "/api/v1/alerts/rules/1")).toHaveLength(0);
  });

  it("shows min requests only for signals that need requests", async () => {
    renderApp("/alerts/rules/1", server.origin);
    const signal = await screen.findByLabelText(/^Signal/);
    expect(screen.queryByLabelText("Min requests")).toBeNull();
    await userEvent.selectOptions(signal, "share_5xx");
    expect(screen.getByLabelText("Min requests")).toBeInTheDocument();
    expect(signal).toHaveAccessibleName(/Signal/);
    expect(within(signal).getByRole("option", { name: "Share of 5xx responses (ratio)" })).toBeInTheDocument();
  });

  it("saves the rule and shows the server's 422 next to the form", async () => {
    server.reply("PUT", "/api/v1/alerts/rules/1", {
      status: 422,
      body: { detail: [{ loc: ["body", "window_s"], msg: "must be a multiple of the sample interval (10 s)" }] },
    });
    renderApp("/alerts/rules/1", server.origin);
    const windowInput = await screen.findByLabelText("Window");
    await userEvent.clear(windowInput);
    await userEvent.type(windowInput, "15s");
    await userEvent.click(screen.getByRole("button", { name: "Save rule" }));
    expect(await screen.findByRole("alert")).toHaveTextContent(
      "Could not save the rule: window_s: must be a multiple of the sample interval (10 s)",
    );
    const [body] = bodiesOf("PUT", "/api/v1/alerts/rules/1");
    const expected: Record<string, unknown> = { ...rule(), window_s: 15 };
    delete expected.id;
    expect(body).toEqual(expected);

    server.reply("PUT", "/api/v1/alerts/rules/1", { status: 200, body: rule({ window_s: 20 }) });
    await userEvent.clear(windowInput);
    await userEvent.type(windowInput, "20s");
    await userEvent.click(screen.getByRole("button", { name: "Save rule" }));
    expect(await screen.findByText("Saved.")).toHaveAttribute("role", "status");
  });

  it("creates a rule with the channels picked, and takes the new signal's usual direction", async () => {
    server.reply("POST", "/api/v1/alerts/rules", { status: 201, body: rule({ id: 9, key: "cert-soon", name: "Cert soon" }) });
    server.reply("GET", "/api/v1/alerts/rules/9", { status: 200, body: rule({ id: 9, key: "cert-soon", name: "Cert soon" }) });
    const { router } = renderApp("/alerts/rules/new", server.origin);
    await userEvent.type(await screen.findByLabelText("Name"), "Cert soon");
    await userEvent.type(screen.getByLabelText("Key"), "cert-soon");
    await userEvent.selectOptions(screen.getByLabelText(/^Signal/), "cert_days_left");
    expect(screen.getByLabelText("Fire when the value is")).toHaveValue("<");
    await userEvent.clear(screen.getByLabelText("Threshold"));
    await userEvent.type(screen.getByLabelText("Threshold"), "14");
    await userEvent.type(screen.getByLabelText("Scope"), "env=prod");
    await userEvent.click(screen.getByLabelText(/No data/));
    await userEvent.click(screen.getByRole("checkbox", { name: /ops-webhook/ }));
    await userEvent.click(screen.getByRole("button", { name: "Create rule" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/alerts/rules/9"));
    expect(bodiesOf("POST", "/api/v1/alerts/rules")).toEqual([
      {
        key: "cert-soon",
        name: "Cert soon",
        description: "",
        enabled: true,
        signal: "cert_days_left",
        op: "<",
        threshold: 14,
        clear_threshold: null,
        min_requests: null,
        window_s: 300,
        for_s: 0,
        keep_firing_s: 0,
        repeat_interval_s: null,
        severity: "warning",
        no_data: "nodata",
        scope: { env: "prod" },
        channel_ids: [2],
      },
    ]);
  });

  it("deletes a rule after confirmation", async () => {
    server.reply("DELETE", "/api/v1/alerts/rules/1", { status: 204 });
    const confirm = vi.spyOn(window, "confirm").mockReturnValue(true);
    const { router } = renderApp("/alerts/rules/1", server.origin);
    await userEvent.click(await screen.findByRole("button", { name: "Delete rule" }));
    expect(confirm).toHaveBeenCalledWith('Delete the rule "Dropped connections"? It stops alerting at once.');
    await waitFor(() => expect(router.state.location.pathname).toBe("/alerts/rules"));
    expect(requestsTo("DELETE", "/api/v1/alerts/rules/1")).toHaveLength(1);
  });
});

describe("silences", () => {
  it("creates a silence from an incident's link, filled in for its rule and host", async () => {
    server.reply("POST", "/api/v1/alerts/silences", { status: 201, body: silence({ rule_id: 1 }) });
    renderApp("/alerts/silences?rule=1&host=edge-drops", server.origin);
    const form = await screen.findByRole("form", { name: "new silence" });
    await waitFor(() => expect(within(form).getByLabelText("Rule (optional)")).toHaveValue("1"));
    expect(within(form).getByLabelText("Matcher 1 label")).toHaveValue("host");
    expect(within(form).getByLabelText("Matcher 1 value")).toHaveValue("edge-drops");

    await userEvent.click(within(form).getByRole("button", { name: "Create silence" }));
    expect(within(form).getByRole("alert")).toHaveTextContent("Reason is required");
    await userEvent.type(within(form).getByLabelText("Reason"), "kernel upgrade");
    await userEvent.clear(within(form).getByLabelText("Duration"));
    await userEvent.type(within(form).getByLabelText("Duration"), "1h");
    const before = Date.now();
    await userEvent.click(within(form).getByRole("button", { name: "Create silence" }));
    await waitFor(() => expect(requestsTo("POST", "/api/v1/alerts/silences")).toHaveLength(1));
    const body = bodiesOf("POST", "/api/v1/alerts/silences")[0] as { ends_at: string };
    expect(body).toMatchObject({
      rule_id: 1,
      matchers: [{ label: "host", op: "=", value: "edge-drops" }],
      reason: "kernel upgrade",
    });
    const endsIn = Date.parse(body.ends_at) - before;
    expect(endsIn).toBeGreaterThan(3_590_000);
    expect(endsIn).toBeLessThan(3_610_000);
  });

  it("lists active silences with who made them, expires one, and shows expired ones on request", async () => {
    server.reply("GET", "/api/v1/alerts/silences", { status: 200, body: [silence()] });
    server.reply("DELETE", "/api/v1/alerts/silences/4", { status: 204 });
    renderApp("/alerts/silences", server.origin);
    const table = await screen.findByRole("table", { name: "silences" });
    const row = within(table).getAllByRole("row")[1] as HTMLElement;
    expect(row).toHaveTextContent("host=edge-drops");
    expect(row).toHaveTextContent("planned maintenance");
    expect(row).toHaveTextContent("olga");
    expect(requestsTo("GET", "/api/v1/alerts/silences")[0]?.url).toContain("active=true");

    server.reply("GET", "/api/v1/alerts/silences", { status: 200, body: [] });
    await userEvent.click(within(row).getByRole("button", { name: "Expire silence 4 now" }));
    expect(await screen.findByText("No active silence: every alert notifies.")).toBeInTheDocument();
    expect(requestsTo("DELETE", "/api/v1/alerts/silences/4")).toHaveLength(1);

    server.reply("GET", "/api/v1/alerts/silences", { status: 200, body: [silence({ active: false })] });
    await userEvent.click(screen.getByLabelText("Show expired"));
    const all = await screen.findByRole("table", { name: "silences" });
    expect(within(all).getAllByRole("row")[1]).toHaveTextContent("expired");
    expect(within(all).queryByRole("button", { name: /Expire/ })).toBeNull();
    expect(requestsTo("GET", "/api/v1/alerts/silences").at(-1)?.url).toContain("active=false");
  });
});

describe("channels", () => {
  it("keeps a stored secret when left empty, and sends an empty string to clear it", async () => {
    server.reply("PUT", "/api/v1/alerts/channels/2", { status: 200, body: channel() });
    renderApp("/alerts/channels", server.origin);
    const card = await screen.findByRole("article", { name: "channel ops-webhook" });
    await userEvent.click(within(card).getByRole("button", { name: "Edit" }));
    const form = within(card).getByRole("form", { name: "edit channel ops-webhook" });
    const token = within(form).getByLabelText("Bearer token");
    expect(token).toHaveAttribute("type", "password");
    expect(token).toHaveValue("");
    expect(token).toHaveAttribute("placeholder", "set — leave empty to keep");
    expect(token).toHaveAccessibleDescription("set — leave empty to keep");

    await userEvent.click(within(form).getByRole("button", { name: "Save channel" }));
    await waitFor(() => expect(requestsTo("PUT", "/api/v1/alerts/channels/2")).toHaveLength(1));
    expect(bodiesOf("PUT", "/api/v1/alerts/channels/2")[0]).toMatchObject({ secrets: {} });

    await userEvent.click(within(card).getByRole("button", { name: "Edit" }));
    const again = within(card).getByRole("form", { name: "edit channel ops-webhook" });
    await userEvent.click(within(again).getByRole("checkbox", { name: "clear the stored bearer token" }));
    expect(within(again).getByLabelText("Bearer token")).toBeDisabled();
    await userEvent.click(within(again).getByRole("button", { name: "Save channel" }));
    await waitFor(() => expect(requestsTo("PUT", "/api/v1/alerts/channels/2")).toHaveLength(2));
    expect(bodiesOf("PUT", "/api/v1/alerts/channels/2")[1]).toMatchObject({ secrets: { bearer_token: "" } });
  });

  it("creates a webhook channel with a new secret typed in a password field", async () => {
    server.reply("POST", "/api/v1/alerts/channels", { status: 201, body: channel({ id: 3, name: "receiver" }) });
    renderApp("/alerts/channels", server.origin);
    await userEvent.click(await screen.findByRole("button", { name: "New channel" }));
    const form = screen.getByRole("form", { name: "new channel" });
    await userEvent.type(within(form).getByLabelText("Name"), "receiver");
    await userEvent.type(within(form).getByLabelText("URL"), "http://127.0.0.1:9/hook");
    const token = within(form).getByLabelText("Bearer token");
    expect(token).toHaveAttribute("type", "password");
    expect(within(form).queryByRole("checkbox", { name: /clear/ })).toBeNull();
    await userEvent.type(token, "t0ken");
    await userEvent.click(within(form).getByRole("button", { name: "Create channel" }));
    await waitFor(() => expect(screen.queryByRole("form", { name: "new channel" })).toBeNull());
    expect(bodiesOf("POST", "/api/v1/alerts/channels")).toEqual([
      {
        name: "receiver",
        kind: "webhook",
        enabled: true,
        settings: { url: "http://127.0.0.1:9/hook" },
        secrets: { bearer_token: "t0ken" },
      },
    ]);
  });

  it("sends a test notification and says how it went, then lists the channel's deliveries", async () => {
    server.reply("POST", "/api/v1/alerts/channels/2/test", { status: 200, body: delivery({ event: "test", incident_ids: [] }) });
    server.reply("GET", "/api/v1/alerts/channels/2/deliveries", { status: 200, body: [delivery()] });
    renderApp("/alerts/channels", server.origin);
    const card = await screen.findByRole("article", { name: "channel ops-webhook" });
    await userEvent.click(within(card).getByRole("button", { name: "Send test notification" }));
    expect(await within(card).findByRole("status", { name: "test notification outcome" })).toHaveTextContent(
      "Test notification sent (HTTP 200, 35 ms)",
    );
    await userEvent.click(within(card).getByRole("button", { name: "Show recent deliveries" }));
    const table = await within(card).findByRole("table", { name: "recent deliveries" });
    expect(within(table).getByRole("link", { name: "#7" })).toHaveAttribute("href", "/alerts/incidents/7");
  });

  it("is an admin page", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "operator", username: "olga" }) });
    renderApp("/alerts/channels", server.origin);
    expect(await screen.findByText("You need the admin role to view this page.")).toBeInTheDocument();
    expect(requestsTo("GET", "/api/v1/alerts/channels")).toHaveLength(0);
  });
});

describe("host charts", () => {
  it("lists the alerts shaded on the charts, asked for the chart's range, linked to their incidents", async () => {
    server.reply("GET", "/api/v1/hosts/3", { status: 200, body: hostDetail({ id: 3, hostname: "edge-drops" }) });
    server.reply("GET", "/api/v1/hosts/3/series", { status: 200, body: series([]) });
    server.reply("GET", "/api/v1/changes", { status: 200, body: { items: [], total: 0 } });
    server.reply("GET", "/api/v1/hosts/3/scores", { status: 200, body: [] });
    server.reply("GET", "/api/v1/hosts/3/alert-periods", {
      status: 200,
      body: [
        {
          incident_id: 7,
          rule_key: "dropped-connections",
          rule_name: "Dropped connections",
          severity: "critical",
          start: "2026-11-21T09:50:00Z",
          end: null,
        },
        {
          incident_id: 2,
          rule_key: "dropped-connections",
          rule_name: "Old drops",
          severity: "warning",
          start: "2026-11-20T09:50:00Z",
          end: "2026-11-20T10:00:00Z",
        },
      ],
    });
    renderApp("/hosts/3?range=15m", server.origin);
    const marks = await screen.findByRole("list", { name: "alerts on the charts" });
    const items = within(marks).getAllByRole("listitem");
    expect(items).toHaveLength(1);
    expect(within(marks).getByRole("link", { name: "Dropped connections" })).toHaveAttribute("href", "/alerts/incidents/7");
    expect(items[0]).toHaveTextContent("2026-11-21 09:50:00 – still firing");
    const url = new URL(requestsTo("GET", "/api/v1/hosts/3/alert-periods")[0]?.url ?? "", server.origin);
    const from = Date.parse(url.searchParams.get("from") ?? "");
    const to = Date.parse(url.searchParams.get("to") ?? "");
    expect(to - from).toBe(15 * 60_000);
  });
});
