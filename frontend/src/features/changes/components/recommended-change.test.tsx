import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestApiServer, startApiServer } from "../../../test/api-server";
import { hostDetail, user } from "../../../test/factories";
import { renderApp } from "../../../test/render-app";
import { NGINX_CONF, analysis, finding, hostConfig } from "../../config/test/factories";
import { GZIP_KEY, change, changeDetail, proposal } from "../test/factories";

let server: TestApiServer;

const gzip = finding({
  id: 2,
  rule: "C-gzip",
  severity: "info",
  category: "compression",
  line: 6,
  place: "http",
  directive: "gzip",
  message: "gzip is off",
  evidence: {},
  fix: { action: "set", directive: "gzip", args: ["on"], file: NGINX_CONF, line: 6, context: "http" },
});
const connections = finding();
const manual = finding({
  id: 3,
  rule: "X-manual",
  line: 1,
  place: "main",
  directive: "worker_processes",
  message: "needs a person",
  fix: { action: "none", directive: "worker_processes", args: [], file: NGINX_CONF, line: 1, context: "main" },
});

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
  server.reply("GET", "/api/v1/hosts/7/config", {
    status: 200,
    body: hostConfig({ analysis: analysis([connections, gzip, manual]) }),
  });
  server.reply("GET", "/api/v1/acks", { status: 200, body: [] });
  server.reply("POST", "/api/v1/hosts/7/changes/preview", { status: 200, body: proposal() });
  server.reply("GET", "/api/v1/changes", { status: 200, body: { items: [], total: 0 } });
});

function posts(path: string): unknown[] {
  return server.requests.filter((r) => r.method === "POST" && r.url === path).map((r) => JSON.parse(r.body) as unknown);
}

async function openRecommendedChange(rule: RegExp): Promise<HTMLElement> {
  const list = await screen.findByRole("region", { name: "findings" });
  await userEvent.click(within(list).getByRole("button", { name: rule }));
  await userEvent.click(screen.getByRole("button", { name: "Recommended change" }));
  return screen.findByRole("region", { name: "recommended change" });
}

describe("recommended change on the config tab", () => {
  it("shows the checked diff with the score, then approves and applies it and opens the change", async () => {
    server.reply("POST", "/api/v1/hosts/7/changes", { status: 201, body: change() });
    server.reply("POST", "/api/v1/changes/5/approve", { status: 200, body: change({ status: "approved" }) });
    server.reply("GET", "/api/v1/changes/5", { status: 200, body: changeDetail({ status: "approved" }) });
    const { router } = renderApp("/hosts/7/config", server.origin);

    const panel = await openRecommendedChange(/C-gzip.*gzip is off/);
    const diff = await within(panel).findByRole("region", { name: "diff" });
    expect(within(diff).getByLabelText("removed line 6")).toHaveTextContent("gzip off;");
    expect(within(diff).getByLabelText("added line 6")).toHaveTextContent("gzip on;");
    expect(within(panel).getByLabelText("score before and after")).toHaveTextContent("Config score 81 → 84 (+3)");
    expect(within(panel).getByRole("status")).toHaveTextContent("Self-check passed");
    expect(posts("/api/v1/hosts/7/changes/preview")).toEqual([{ finding_keys: [GZIP_KEY], overrides: {} }]);

    // Side by side: the old line on the left, the new one on the right.
    await userEvent.click(within(diff).getByRole("button", { name: "Side by side" }));
    const row = within(diff).getByLabelText("removed line 6").parentElement;
    expect(row).toHaveTextContent(/gzip off;.*gzip on;/);

    await userEvent.click(within(panel).getByRole("button", { name: "Approve and apply" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/changes/5"));
    expect(posts("/api/v1/hosts/7/changes")).toEqual([{ finding_keys: [GZIP_KEY], overrides: {}, comment: "" }]);
    expect(posts("/api/v1/changes/5/approve")).toEqual([{ comment: "" }]);
    expect(await screen.findByRole("heading", { name: "Change 5" })).toBeInTheDocument();
  });

  it("re-checks the diff with adjusted arguments and proposes them as overrides", async () => {
    server.reply("POST", "/api/v1/hosts/7/changes", { status: 201, body: change() });
    renderApp("/hosts/7/config", server.origin);
    const panel = await openRecommendedChange(/C-gzip.*gzip is off/);
    const input = await within(panel).findByRole("textbox", { name: "arguments of gzip" });
    expect(input).toHaveValue("on");

    server.reply("POST", "/api/v1/hosts/7/changes/preview", {
      status: 200,
      body: proposal({ ok: false, reason: 'introduces V-args at /etc/nginx/nginx.conf:6', score_after: 60 }),
    });
    await userEvent.clear(input);
    await userEvent.type(input, "of f");
    expect(await within(panel).findByRole("alert")).toHaveTextContent(
      "No change is offered for this: introduces V-args at /etc/nginx/nginx.conf:6",
    );
    expect(within(panel).queryByRole("button", { name: "Approve and apply" })).toBeNull();
    // Typed in one go, checked once: the debounce sends the final value only.
    expect(posts("/api/v1/hosts/7/changes/preview").at(-1)).toEqual({
      finding_keys: [GZIP_KEY],
      overrides: { e1: ["of", "f"] },
    });

    server.reply("POST", "/api/v1/hosts/7/changes/preview", {
      status: 200,
      body: proposal({ edits: [{ ...proposal().edits[0]!, args: ["off"] }] }),
    });
    await userEvent.clear(input);
    await userEvent.type(input, "off");
    await userEvent.click(await within(panel).findByRole("button", { name: "Propose" }));
    await waitFor(() => expect(posts("/api/v1/hosts/7/changes")).toHaveLength(1));
    expect(posts("/api/v1/hosts/7/changes")[0]).toEqual({
      finding_keys: [GZIP_KEY],
      overrides: { e1: ["off"] },
      comment: "",
    });
    expect(await within(panel).findByRole("link", { name: "change 5" })).toHaveAttribute("href", "/changes/5");
    expect(within(panel).getByRole("button", { name: "Approve" })).toBeInTheDocument();
  });

  it("says why no change is offered, and offers no approval", async () => {
    server.reply("POST", "/api/v1/hosts/7/changes/preview", {
      status: 200,
      body: proposal({ ok: false, reason: "C-gzip is still reported after the patch" }),
    });
    renderApp("/hosts/7/config", server.origin);
    const panel = await openRecommendedChange(/C-gzip.*gzip is off/);
    expect(await within(panel).findByRole("alert")).toHaveTextContent("C-gzip is still reported after the patch");
    expect(within(panel).queryByRole("button", { name: /Propose|Approve/ })).toBeNull();
  });

  it("shows the API's refusal of a proposal in words", async () => {
    server.reply("POST", "/api/v1/hosts/7/changes", {
      status: 422,
      body: { detail: "no change is offered for this: the fix of C-gzip is manual" },
    });
    renderApp("/hosts/7/config", server.origin);
    const panel = await openRecommendedChange(/C-gzip.*gzip is off/);
    await userEvent.click(await within(panel).findByRole("button", { name: "Propose" }));
    expect(await within(panel).findByRole("alert")).toHaveTextContent(
      "Could not propose the change: no change is offered for this: the fix of C-gzip is manual",
    );
  });

  it("fixes several ticked findings in one change", async () => {
    renderApp("/hosts/7/config", server.origin);
    const list = await screen.findByRole("region", { name: "findings" });
    // A manual fix cannot be ticked.
    expect(within(list).queryByRole("checkbox", { name: /X-manual/ })).toBeNull();
    await userEvent.click(within(list).getByRole("checkbox", { name: "fix C-gzip at line 6 together with others" }));
    await userEvent.click(
      within(list).getByRole("checkbox", { name: "fix W-connections at line 3 together with others" }),
    );
    const picked = screen.getByRole("group", { name: "findings picked for one change" });
    expect(picked).toHaveTextContent("2 findings picked");
    await userEvent.click(within(picked).getByRole("button", { name: "Preview together" }));
    const panel = await screen.findByRole("region", { name: "recommended change" });
    expect(panel).toHaveTextContent("2 findings fixed together");
    await within(panel).findByRole("region", { name: "diff" });
    expect(posts("/api/v1/hosts/7/changes/preview")).toEqual([
      { finding_keys: [GZIP_KEY, connections.key].sort(), overrides: {} },
    ]);
  });

  it("lets a viewer see the diff but not propose or approve it", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer" }) });
    renderApp("/hosts/7/config", server.origin);
    const panel = await openRecommendedChange(/C-gzip.*gzip is off/);
    expect(await within(panel).findByRole("region", { name: "diff" })).toBeInTheDocument();
    expect(within(panel).queryByRole("button", { name: /Propose|Approve/ })).toBeNull();
    expect(panel).toHaveTextContent("Operators and admins can propose and approve this change.");
  });

  it("shows a host whose agent does not allow apply as read-only and offers no change", async () => {
    server.reply("GET", "/api/v1/hosts/7", { status: 200, body: hostDetail({ id: 7, apply_allowed: false }) });
    renderApp("/hosts/7/config", server.origin);
    const list = await screen.findByRole("region", { name: "findings" });
    expect(screen.getByText(/the agent on this host does not allow apply/)).toBeInTheDocument();
    await userEvent.click(within(list).getByRole("button", { name: /C-gzip.*gzip is off/ }));
    expect(screen.getByRole("article", { name: "selected finding" })).toHaveTextContent("gzip is off");
    expect(screen.queryByRole("button", { name: "Recommended change" })).toBeNull();
    expect(within(list).queryByRole("checkbox", { name: /C-gzip/ })).toBeNull();
    expect(posts("/api/v1/hosts/7/changes/preview")).toEqual([]);
  });
});
