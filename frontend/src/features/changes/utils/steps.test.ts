import { describe, expect, it } from "vitest";
import { changeEvent, verifiedEvents } from "../test/factories";
import { applyProgress, reachedAgent } from "./steps";

const states = (events: Parameters<typeof applyProgress>[0], status: string) =>
  applyProgress(events, status).steps.map((s) => `${s.step}:${s.state}`);

describe("applyProgress", () => {
  it("shows every step ok and the outcome once the change is verified", () => {
    const progress = applyProgress(verifiedEvents(), "verified");
    expect(progress.steps.map((s) => s.state)).toEqual(["ok", "ok", "ok", "ok", "ok", "ok", "ok"]);
    expect(progress.outcome).toMatchObject({ state: "verified", message: "applied and live" });
  });

  it("marks the running step and the ones still to come while the agent works", () => {
    const events = [
      changeEvent({ step: "received", step_status: "ok" }),
      changeEvent({ step: "check", step_status: "ok" }),
      changeEvent({ step: "backup", step_status: "ok" }),
      changeEvent({ step: "write", step_status: "ok" }),
      changeEvent({ step: "test", step_status: "started" }),
    ];
    expect(states(events, "applying")).toEqual([
      "received:ok",
      "check:ok",
      "backup:ok",
      "write:ok",
      "test:running",
      "reload:pending",
      "verify:pending",
    ]);
    expect(applyProgress(events, "applying").outcome.state).toBe("pending");
  });

  it("keeps nginx's own message of a failed test, then the way back, then the rollback", () => {
    const emerg = 'nginx: [emerg] unknown directive "gzp" in /etc/nginx/nginx.conf:12';
    const events = [
      ...["received", "check", "backup", "write"].map((step) => changeEvent({ step, step_status: "ok" })),
      changeEvent({ step: "test", step_status: "started" }),
      changeEvent({ step: "test", step_status: "failed", message: emerg }),
      changeEvent({ step: "restore", step_status: "ok" }),
      changeEvent({ step: "reload", step_status: "started" }),
      changeEvent({ step: "reload", step_status: "ok" }),
      changeEvent({
        status: "rolled_back",
        step: "outcome",
        step_status: "rolled_back",
        message: emerg,
        detail: { failed_step: "test" },
      }),
    ];
    const progress = applyProgress(events, "rolled_back");
    expect(progress.steps.map((s) => `${s.step}:${s.state}${s.recovery ? " (back)" : ""}`)).toEqual([
      "received:ok",
      "check:ok",
      "backup:ok",
      "write:ok",
      "test:failed",
      "reload:not run",
      "verify:not run",
      "restore:ok (back)",
      "reload:ok (back)",
    ]);
    expect(progress.steps[4]?.message).toBe(emerg);
    expect(progress.outcome).toEqual({ state: "rolled_back", message: emerg, at: events[9]?.at, reason: "test" });
  });

  it("says why the agent refused a change", () => {
    const events = [
      changeEvent({ step: "received", step_status: "ok" }),
      changeEvent({ step: "check", step_status: "failed", message: "nginx.conf changed since the diff was made" }),
      changeEvent({ status: "refused", step: "outcome", step_status: "refused", detail: { reason: "stale" } }),
    ];
    const progress = applyProgress(events, "refused");
    expect(progress.steps.slice(0, 3).map((s) => s.state)).toEqual(["ok", "failed", "not run"]);
    expect(progress.outcome).toMatchObject({ state: "refused", reason: "stale" });
  });

  it("shows every step waiting once approved, before the agent reports", () => {
    expect(new Set(applyProgress([], "approved").steps.map((s) => s.state))).toEqual(new Set(["pending"]));
    expect(reachedAgent("approved", [])).toBe(true);
    expect(reachedAgent("proposed", [changeEvent({ status: "proposed" })])).toBe(false);
    expect(reachedAgent("refused", [changeEvent({ step: "outcome", step_status: "refused" })])).toBe(true);
  });
});
