import { describe, expect, it } from "vitest";
import { finding } from "../test/factories";
import { type AckFormValues, EMPTY_ACK_FORM, expiryFromDate, validateAckForm } from "./ack-form";

const NOW = new Date(2026, 10, 21, 12, 0).getTime();
const f = finding();
const form = (overrides: Partial<AckFormValues>): AckFormValues => ({ ...EMPTY_ACK_FORM, ...overrides });

describe("validateAckForm", () => {
  it("requires a reason of at least three characters and at most 500", () => {
    for (const reason of ["", "  ", "ok", ` ${"x".repeat(501)} `]) {
      const result = validateAckForm(form({ reason }), f, 7, NOW);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.errors.reason).toBeTruthy();
    }
  });

  it("mutes this finding on this host by default, with the reason trimmed and no expiry", () => {
    const result = validateAckForm(form({ reason: "  load test box  " }), f, 7, NOW);
    expect(result).toEqual({
      ok: true,
      body: { rule: "W-connections", host_id: 7, finding_key: f.key, reason: "load test box", expires_at: null },
    });
  });

  it("mutes every finding of the rule fleet-wide when asked", () => {
    const result = validateAckForm(form({ reason: "accepted risk", scope: "fleet", target: "rule" }), f, 7, NOW);
    expect(result.ok && result.body).toMatchObject({ host_id: null, finding_key: null, rule: "W-connections" });
  });

  it("lets the mute last through the chosen day, and refuses past or impossible dates", () => {
    const today = validateAckForm(form({ reason: "until tonight", expiresOn: "2026-11-21" }), f, 7, NOW);
    expect(today.ok && today.body.expires_at).toBe(new Date(2026, 10, 22).toISOString());
    const past = validateAckForm(form({ reason: "too late", expiresOn: "2026-11-20" }), f, 7, NOW);
    expect(!past.ok && past.errors.expiresOn).toMatch(/today or later/);
    const bogus = validateAckForm(form({ reason: "bad date", expiresOn: "2026-02-30" }), f, 7, NOW);
    expect(!bogus.ok && bogus.errors.expiresOn).toMatch(/valid date/);
  });

  it("reports every wrong field at once", () => {
    const result = validateAckForm(form({ reason: "x", expiresOn: "2020-01-01" }), f, 7, NOW);
    expect(result.ok ? {} : Object.keys(result.errors).sort()).toEqual(["expiresOn", "reason"]);
  });
});

describe("expiryFromDate", () => {
  it("reads only YYYY-MM-DD", () => {
    expect(expiryFromDate("21/11/2026")).toBeNull();
    expect(expiryFromDate("2026-11-21")?.getDate()).toBe(22);
  });
});
