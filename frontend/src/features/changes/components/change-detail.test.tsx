import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestApiServer, startApiServer } from "../../../test/api-server";
import { user } from "../../../test/factories";
import { renderApp } from "../../../test/render-app";
import { change, changeDetail, changeEvent, verifiedEvents } from "../test/factories";

let server: TestApiServer;

const EMERG = 'nginx: [emerg] unknown directive "gzp" in /etc/nginx/nginx.conf:12';

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "operator", username: "olga" }) });
  server.reply("GET", "/api/v1/changes", { status: 200, body: { items: [], total: 0 } });
});

function posts(path: string): unknown[] {
  return server.requests.filter((r) => r.method === "POST" && r.url === path).map((r) => JSON.parse(r.body) as unknown);
}

/** The value of one of the change's facts (proposed, approved, sent, ...). */
function fact(name: string): HTMLElement {
  const term = screen.getByText(name, { selector: "dt" });
  return term.nextElementSibling as HTMLElement;
}

function step(name: string): HTMLElement {
  return within(screen.getByRole("list", { name: "apply steps" })).getByRole("listitem", {
    name: new RegExp(`^${name}: `),
  });
}

const MEASURED = {
  status: "measured",
  window_s: 300,
  before: ["2026-11-21T09:55:00+00:00", "2026-11-21T10:00:00+00:00"],
  after: ["2026-11-21T10:00:00+00:00", "2026-11-21T10:05:00+00:00"],
  metrics: [
    {
      name: "waiting_share",
      label: "Waiting share of Active",
      unit: "%",
      before: 56.6667,
      after: 20,
      change_pct: -64.7,
      significant: true,
      statement: "Waiting share of Active fell from 56.6667 to 20 (-64.7%)",
    },
    {
      name: "drops_per_s",
      label: "dropped connections/s",
      unit: "conn/s",
      before: 0,
      after: 0,
      change_pct: null,
      significant: false,
      statement: "dropped connections/s: no change beyond the normal variation (0 → 0)",
    },
  ],
  summary: "Waiting share of Active fell from 56.6667 to 20 (-64.7%)",
  score_before: 81,
  score_after: 84,
};

describe("change detail", () => {
  it("shows who proposed and approved it, the diff, and each apply step with nginx's message on failure", async () => {
    server.reply("GET", "/api/v1/changes/5", {
      status: 200,
      body: changeDetail({
        status: "rolled_back",
        step: "outcome",
        approved_by: "ann",
        approved_at: "2026-11-21T10:01:00Z",
        comment: "gzip for the API",
        outcome_message: EMERG,
        failed_step: "test",
        events: [
          changeEvent({ status: "proposed", actor: "olga", message: "gzip for the API" }),
          changeEvent({ status: "approved", actor: "ann", message: "ship it" }),
          ...["received", "check", "backup", "write"].map((s) => changeEvent({ step: s, step_status: "ok" })),
          changeEvent({ step: "test", step_status: "failed", message: EMERG }),
          changeEvent({ step: "restore", step_status: "ok" }),
          changeEvent({ step: "reload", step_status: "ok" }),
          changeEvent({
            status: "rolled_back",
            step: "outcome",
            step_status: "rolled_back",
            message: EMERG,
            detail: { failed_step: "test" },
          }),
        ],
      }),
    });
    renderApp("/changes/5", server.origin);
    expect(await screen.findByRole("heading", { name: "Change 5" })).toBeInTheDocument();
    expect(fact("proposed")).toHaveTextContent("olga 2026-11-21 10:00:00");
    expect(fact("approved")).toHaveTextContent("ann 2026-11-21 10:01:00");
    expect(screen.getByText("“gzip for the API”", { selector: ".change-comment" })).toBeInTheDocument();
    expect(screen.getByRole("alert")).toHaveTextContent(`rolled back at test: ${EMERG}`);
    expect(step("check")).toHaveTextContent("ok");
    expect(step("test")).toHaveAccessibleName("test: failed");
    expect(step("test")).toHaveTextContent(EMERG);
    expect(step("verify")).toHaveTextContent("not run");
    expect(step("restore")).toHaveTextContent("ok");
    expect(step("outcome")).toHaveAccessibleName("outcome: rolled back");
    expect(within(screen.getByRole("region", { name: "history" })).getByText("“ship it”")).toBeInTheDocument();
    expect(within(screen.getByRole("region", { name: "diff" })).getByLabelText("added line 6")).toHaveTextContent(
      "gzip on;",
    );
    // Nothing to approve, reject or roll back in a finished, failed change.
    expect(screen.queryByRole("region", { name: "review" })).toBeNull();
  });

  it("approves a proposed change with a comment", async () => {
    server.reply("GET", "/api/v1/changes/5", { status: 200, body: changeDetail() });
    server.reply("POST", "/api/v1/changes/5/approve", { status: 200, body: change({ status: "approved" }) });
    renderApp("/changes/5", server.origin);
    const review = await screen.findByRole("region", { name: "review" });
    await userEvent.type(within(review).getByLabelText("Comment (optional)"), "looks right");
    await userEvent.click(within(review).getByRole("button", { name: "Approve" }));
    await waitFor(() => expect(posts("/api/v1/changes/5/approve")).toEqual([{ comment: "looks right" }]));
    expect(server.requests.find((r) => r.url === "/api/v1/changes/5/approve")?.headers["x-csrf-token"]).toBe(
      "test-csrf",
    );
  });

  it("leaves the approval of a rollout's change to its rollout", async () => {
    server.reply("GET", "/api/v1/changes/5", { status: 200, body: changeDetail({ rollout_id: 3, wave: 1 }) });
    renderApp("/changes/5", server.origin);
    const review = await screen.findByRole("region", { name: "review" });
    expect(review).toHaveTextContent("Rollout 3 approves this change with its wave.");
    expect(within(review).queryByRole("button", { name: "Approve" })).toBeNull();
    expect(within(review).getByRole("button", { name: "Reject" })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "rollout 3, wave 1" })).toHaveAttribute("href", "/rollouts/3");
  });

  it("rejects an approved change, and says why the API refuses an approval", async () => {
    server.reply("GET", "/api/v1/changes/5", { status: 200, body: changeDetail() });
    server.reply("POST", "/api/v1/changes/5/approve", {
      status: 409,
      body: { detail: "change 5 is stale and was superseded; review the new diff, change 6" },
    });
    server.reply("POST", "/api/v1/changes/5/reject", { status: 200, body: change({ status: "rejected" }) });
    renderApp("/changes/5", server.origin);
    const review = await screen.findByRole("region", { name: "review" });
    await userEvent.click(within(review).getByRole("button", { name: "Approve" }));
    expect(await within(review).findByRole("alert")).toHaveTextContent(
      "Could not approve: change 5 is stale and was superseded; review the new diff, change 6",
    );
    await userEvent.type(within(review).getByLabelText("Comment (optional)"), "not now");
    await userEvent.click(within(review).getByRole("button", { name: "Reject" }));
    await waitFor(() => expect(posts("/api/v1/changes/5/reject")).toEqual([{ comment: "not now" }]));
  });

  it("shows the measured impact and rolls a verified change back, opening the rollback", async () => {
    server.reply("GET", "/api/v1/changes/5", {
      status: 200,
      body: changeDetail({
        status: "verified",
        step: "outcome",
        finished_at: "2026-11-21T10:00:00Z",
        impact: MEASURED,
        events: verifiedEvents(),
      }),
    });
    server.reply("POST", "/api/v1/changes/5/rollback", {
      status: 201,
      body: change({ id: 9, kind: "rollback", reverts_change_id: 5, status: "approved" }),
    });
    server.reply("GET", "/api/v1/changes/9", {
      status: 200,
      body: changeDetail({ id: 9, kind: "rollback", reverts_change_id: 5, status: "approved", events: [] }),
    });
    const { router } = renderApp("/changes/5", server.origin);
    const impact = await screen.findByRole("region", { name: "impact" });
    expect(impact).toHaveTextContent("Measured over 5 min before and after: Waiting share of Active fell");
    const rows = within(within(impact).getByRole("table", { name: "impact figures" })).getAllByRole("row");
    expect(rows[1]).toHaveTextContent("Waiting share of Active56.7%20.0%−64.7%yes, significant");
    expect(rows[2]).toHaveTextContent("dropped connections/s0/s0/s—no");
    expect(within(impact).getByLabelText("score before and after")).toHaveTextContent("Config score 81 → 84 (+3)");
    expect(step("verify")).toHaveTextContent("ok");
    expect(step("outcome")).toHaveAccessibleName("outcome: verified");

    const review = screen.getByRole("region", { name: "review" });
    expect(within(review).queryByRole("button", { name: "Approve" })).toBeNull();
    await userEvent.click(within(review).getByRole("button", { name: "Roll back" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/changes/9"));
    expect(posts("/api/v1/changes/5/rollback")).toEqual([{ comment: "" }]);
    expect(await screen.findByRole("heading", { name: "Rollback 9" })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "change 5" })).toHaveAttribute("href", "/changes/5");
  });

  it("says in words when the impact is still measured or could not be", async () => {
    const verified = { status: "verified", finished_at: "2026-11-21T10:00:00Z", events: verifiedEvents() };
    server.reply("GET", "/api/v1/changes/5", {
      status: 200,
      body: changeDetail({ ...verified, impact: { ...MEASURED, status: "waiting", metrics: [], score_after: null } }),
    });
    const first = renderApp("/changes/5", server.origin);
    const waiting = await screen.findByRole("region", { name: "impact" });
    expect(waiting).toHaveTextContent("Measuring: the 5 min after the apply are compared with the 5 min before it");
    expect(waiting).toHaveTextContent("Config score 81 → — (after the re-analysis; the engine expected 84)");
    first.unmount();

    server.reply("GET", "/api/v1/changes/5", {
      status: 200,
      body: changeDetail({
        ...verified,
        impact: { ...MEASURED, status: "insufficient_data", metrics: [], summary: "too few samples around the apply" },
      }),
    });
    renderApp("/changes/5", server.origin);
    expect(await screen.findByRole("region", { name: "impact" })).toHaveTextContent(
      "Not enough data to measure the impact: too few samples around the apply.",
    );
  });

  it("offers no roll back once a rollback of the change is under way", async () => {
    server.reply("GET", "/api/v1/changes/5", {
      status: 200,
      body: changeDetail({ status: "verified", finished_at: "2026-11-21T10:00:00Z", events: verifiedEvents() }),
    });
    server.reply("GET", "/api/v1/changes", {
      status: 200,
      body: { items: [change({ id: 9, kind: "rollback", reverts_change_id: 5, status: "applying" })], total: 1 },
    });
    renderApp("/changes/5", server.origin);
    expect(await screen.findByText(/Rolled back by/)).toHaveTextContent("Rolled back by change 9 (applying)");
    expect(screen.queryByRole("button", { name: "Roll back" })).toBeNull();
  });

  it("follows a change in flight by polling when no live event comes", async () => {
    server.reply("GET", "/api/v1/changes/5", {
      status: 200,
      body: changeDetail({
        status: "applying",
        step: "test",
        events: [
          changeEvent({ step: "received", step_status: "ok" }),
          changeEvent({ step: "test", step_status: "started" }),
        ],
      }),
    });
    renderApp("/changes/5", server.origin);
    expect(await screen.findByRole("listitem", { name: "test: running…" })).toBeInTheDocument();
    expect(step("reload")).toHaveTextContent("waiting");

    server.reply("GET", "/api/v1/changes/5", {
      status: 200,
      body: changeDetail({ status: "verified", step: "outcome", events: verifiedEvents() }),
    });
    expect(await screen.findByRole("listitem", { name: "outcome: verified" }, { timeout: 5_000 })).toBeInTheDocument();
  });

  it("shows a viewer the change without approve, reject or roll back", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer" }) });
    server.reply("GET", "/api/v1/changes/5", { status: 200, body: changeDetail() });
    renderApp("/changes/5", server.origin);
    expect(await screen.findByRole("heading", { name: "Change 5" })).toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "review" })).toBeNull();
    expect(screen.queryByRole("button", { name: /Approve|Reject|Roll back/ })).toBeNull();
  });

  it("says so when the change does not exist", async () => {
    server.reply("GET", "/api/v1/changes/404", { status: 404, body: { detail: "change 404 does not exist" } });
    renderApp("/changes/404", server.origin);
    expect(await screen.findByRole("alert")).toHaveTextContent("change 404 does not exist");
  });
});
