import { describe, expect, it } from "vitest";
import { SIGNALS, rule, signal } from "../test/factories";
import { NEW_RULE_DRAFT, checkRuleDraft, draftFromRule, previewDraft } from "./rule-form";

const drops = SIGNALS[0];
const share5xx = SIGNALS[1];

describe("rule drafts", () => {
  it("turns a stored rule into text and back into the same body", () => {
    const stored = rule({ repeat_interval_s: 14_400, scope: { role: "edge", env: "prod" }, clear_threshold: -1 });
    const draft = draftFromRule(stored);
    expect(draft.window).toBe("2m");
    expect(draft.forDuration).toBe("1m");
    expect(draft.keepFiring).toBe("5m");
    expect(draft.repeatInterval).toBe("4h");
    expect(draft.scope).toBe("env=prod, role=edge");
    const body: Record<string, unknown> = { ...stored };
    delete body.id;
    expect(checkRuleDraft(draft, drops)).toEqual({ ok: true, body });
  });

  it("reads an empty repeat interval as notify once, and an empty clear threshold as none", () => {
    const check = checkRuleDraft({ ...draftFromRule(rule()), repeatInterval: " ", clearThreshold: "" }, drops);
    expect(check.ok && check.body.repeat_interval_s).toBeNull();
    expect(check.ok && check.body.clear_threshold).toBeNull();
  });

  it("says what is wrong per field", () => {
    const check = checkRuleDraft(
      { ...NEW_RULE_DRAFT, key: "Bad Key", threshold: "lots", window: "5", forDuration: "2x", scope: "env" },
      undefined,
    );
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.errors).toEqual({
      key: "Key may use only lowercase letters, digits and dashes (e.g. dropped-connections)",
      name: "Name is required",
      signal: "Choose a signal",
      threshold: "Threshold must be a number",
      window: "Window needs a unit: 5s, 5m or 5h",
      forDuration: 'For "2x" is not a duration like 30s, 2m, 1h or 1h30m',
      scope: 'Scope: "env" is not key=value',
    });
  });

  it("wants the clear threshold on the quiet side of the threshold", () => {
    const above = checkRuleDraft({ ...draftFromRule(rule({ threshold: 10 })), clearThreshold: "20" }, drops);
    expect(!above.ok && above.errors.clearThreshold).toBe("Clear threshold must be at or below the threshold (10) for >");
    const below = checkRuleDraft(
      { ...draftFromRule(rule({ op: "<", threshold: 14, signal: "cert_days_left" })), clearThreshold: "7" },
      SIGNALS[2],
    );
    expect(!below.ok && below.errors.clearThreshold).toBe("Clear threshold must be at or above the threshold (14) for <");
  });

  it("sends min requests only for signals that need requests (the API refuses it on the others)", () => {
    const draft = { ...draftFromRule(rule({ signal: "share_5xx" })), minRequests: "100" };
    const rate = checkRuleDraft(draft, share5xx);
    expect(rate.ok && rate.body.min_requests).toBe(100);
    for (const text of ["1.5", "0"]) {
      const bad = checkRuleDraft({ ...draft, minRequests: text }, share5xx);
      expect(!bad.ok && bad.errors.minRequests).toBe("Min requests must be a whole number of at least 1, or empty");
    }
    const empty = checkRuleDraft({ ...draft, minRequests: "" }, share5xx);
    expect(empty.ok && empty.body.min_requests).toBeNull();
    // Moved to a signal without requests: the hidden field's value is not sent.
    const moved = checkRuleDraft({ ...draft, signal: "dropped_connections" }, drops);
    expect(moved.ok && moved.body.min_requests).toBeNull();
  });

  it("bounds the durations as the API does", () => {
    const short = checkRuleDraft({ ...draftFromRule(rule()), window: "5s", repeatInterval: "30s" }, signal());
    expect(!short.ok && short.errors).toEqual({
      window: "Window must be at least 10 s",
      repeatInterval: "Repeat interval must be at least 1 min",
    });
    const long = checkRuleDraft(
      { ...draftFromRule(rule()), window: "1d1s", forDuration: "2d", keepFiring: "25h", repeatInterval: "8d" },
      signal(),
    );
    expect(!long.ok && long.errors).toEqual({
      window: "Window must be at most 1 d",
      forDuration: "For must be at most 1 d",
      keepFiring: "Keep firing must be at most 1 d",
      repeatInterval: "Repeat interval must be at most 7 d",
    });
  });

  it("lets a preview run before a new rule has a key or a name", () => {
    const draft = { ...NEW_RULE_DRAFT, key: "Not yet", signal: "dropped_connections" };
    expect(checkRuleDraft(draft, drops).ok).toBe(false);
    const check = checkRuleDraft(previewDraft(draft), drops);
    expect(check.ok && check.body.key).toBe("preview");
    expect(check.ok && check.body.name).toBe("Preview");
  });
});
