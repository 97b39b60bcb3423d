import { describe, expect, it } from "vitest";
import { checkSilenceDraft, matcherText, newSilenceDraft } from "./silence-form";

const NOW = Date.parse("2026-11-21T10:00:00Z");

describe("silence drafts", () => {
  it("builds the body: matchers, an end from the duration, the reason", () => {
    const draft = { ...newSilenceDraft({ host: "edge-drops" }), duration: "2h", reason: " maintenance " };
    expect(checkSilenceDraft(draft, NOW)).toEqual({
      ok: true,
      body: {
        rule_id: null,
        matchers: [{ label: "host", op: "=", value: "edge-drops" }],
        ends_at: "2026-11-21T12:00:00.000Z",
        reason: "maintenance",
      },
    });
  });

  it("takes a rule without matchers, and ignores rows left empty", () => {
    const draft = { ...newSilenceDraft({ ruleId: "3" }), reason: "known" };
    const check = checkSilenceDraft(draft, NOW);
    expect(check.ok && check.body.rule_id).toBe(3);
    expect(check.ok && check.body.matchers).toEqual([]);
  });

  it("refuses a silence of everything, a half-filled row and a missing reason", () => {
    expect(checkSilenceDraft({ ...newSilenceDraft(), reason: "xyz" }, NOW)).toEqual({
      ok: false,
      error: "Choose a rule or add at least one matcher: a silence of everything is not allowed",
    });
    const half = { ...newSilenceDraft(), matchers: [{ label: "env", op: "!=" as const, value: "" }], reason: "xyz" };
    expect(checkSilenceDraft(half, NOW)).toEqual({ ok: false, error: "Matcher 1: the value is empty" });
    expect(checkSilenceDraft(newSilenceDraft({ host: "edge-1" }), NOW)).toEqual({
      ok: false,
      error: "Reason is required: say why these alerts may stay quiet",
    });
    expect(checkSilenceDraft({ ...newSilenceDraft({ host: "edge-1" }), reason: "ok" }, NOW)).toEqual({
      ok: false,
      error: "Reason must be at least 3 characters",
    });
    const badLabel = { ...newSilenceDraft(), matchers: [{ label: "1st", op: "=" as const, value: "x" }], reason: "xyz" };
    expect(checkSilenceDraft(badLabel, NOW)).toEqual({
      ok: false,
      error: 'Matcher 1: label "1st" must start with a letter or _ and use only letters, digits, _ . -',
    });
  });

  it("ends in the future and within 90 days", () => {
    const base = { ...newSilenceDraft({ host: "edge-1" }), reason: "xyz" };
    expect(checkSilenceDraft({ ...base, duration: "91d" }, NOW)).toEqual({
      ok: false,
      error: "Duration must be at most 90 d",
    });
    const until = { ...base, endMode: "until" as const };
    expect(checkSilenceDraft({ ...until, until: "2026-11-21T09:00" }, NOW)).toEqual({
      ok: false,
      error: "End time must be in the future",
    });
    expect(checkSilenceDraft({ ...until, until: "2027-06-01T00:00" }, NOW)).toEqual({
      ok: false,
      error: "End time must be at most 90 days from now",
    });
    const ok = checkSilenceDraft({ ...until, until: "2026-11-22T08:30" }, NOW);
    // The test zone is UTC (src/test/setup.ts): the local time is the UTC time.
    expect(ok.ok && ok.body.ends_at).toBe("2026-11-22T08:30:00.000Z");
  });

  it("writes matchers as label, operator, value", () => {
    expect(matcherText({ label: "env", op: "!=", value: "prod" })).toBe("env!=prod");
  });
});
