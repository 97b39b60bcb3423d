import { describe, expect, it } from "vitest";
import { emptyRolloutForm, parseLabelSelector, validateRolloutForm } from "./rollout-form";

describe("parseLabelSelector", () => {
  it("groups the values of a key given twice", () => {
    expect(parseLabelSelector("env=prod, env=staging\nrole=edge")).toEqual({
      ok: true,
      labels: { env: ["prod", "staging"], role: ["edge"] },
    });
    expect(parseLabelSelector("")).toEqual({ ok: true, labels: {} });
  });

  it("says what is wrong with a term", () => {
    expect(parseLabelSelector("env")).toEqual({ ok: false, error: '"env" is not key=value' });
  });
});

describe("validateRolloutForm", () => {
  it("makes the contract's body from the form", () => {
    const result = validateRolloutForm({
      ...emptyRolloutForm("G-off"),
      labels: "env=prod",
      canary: "2",
      batchSize: "10",
      autoRollback: true,
      maxRise: { waiting_share: "", worker_cpu_pct: "50", rss_bytes: "" },
      checks: "3",
      watchS: "300",
      comment: " canary first ",
    });
    expect(result).toEqual({
      ok: true,
      body: {
        rule: "G-off",
        labels: { env: ["prod"] },
        canary: 2,
        batch_size: 10,
        auto_rollback: { drops: true, max_rise_pct: { worker_cpu_pct: 50 }, checks: 3, watch_s: 300 },
        comment: "canary first",
      },
    });
  });

  it("sends no gate unless asked for", () => {
    const result = validateRolloutForm(emptyRolloutForm("K-reset"));
    expect(result.ok && result.body.auto_rollback).toBeNull();
  });

  it("names every field that is wrong", () => {
    const result = validateRolloutForm({
      ...emptyRolloutForm(""),
      canary: "0",
      batchSize: "many",
      autoRollback: true,
      maxRise: { waiting_share: "-5", worker_cpu_pct: "", rss_bytes: "" },
      checks: "30",
      watchS: "10",
    });
    expect(result).toEqual({
      ok: false,
      errors: {
        rule: "name the rule whose fix to roll out, e.g. G-off",
        canary: "the canary count must be between 1 and 10",
        batchSize: "the batch size must be a whole number",
        checks: "the number of checks must be between 1 and 20",
        watchS: "the watch time in seconds must be between 30 and 86400",
        waiting_share: "a rise limit is a percentage above 0 and at most 10000",
      },
    });
  });
});
