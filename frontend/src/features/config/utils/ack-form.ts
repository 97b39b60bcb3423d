/** The acknowledge form's values, their validation and the request they become. */
import type { AckCreate, Finding } from "../api/types";

export const REASON_MIN = 3;
export const REASON_MAX = 500;

export interface AckFormValues {
  /** This host only, or every host of the fleet. */
  scope: "host" | "fleet";
  /** Only this finding (its key), or every finding of its rule in scope. */
  target: "finding" | "rule";
  reason: string;
  /** `YYYY-MM-DD` from a date input, or "" for no expiry. */
  expiresOn: string;
}

export type AckFormErrors = Partial<Record<"reason" | "expiresOn", string>>;

export type AckFormResult = { ok: true; body: AckCreate } | { ok: false; errors: AckFormErrors };

export const EMPTY_ACK_FORM: AckFormValues = { scope: "host", target: "finding", reason: "", expiresOn: "" };

/** The mute lasts through the chosen day: it ends at the following local midnight. */
export function expiryFromDate(value: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(year, month - 1, day);
  // Rejects 2026-02-30 and the like, which Date would roll over into March.
  if (date.getFullYear() !== year || date.getMonth() !== month - 1 || date.getDate() !== day) return null;
  return new Date(year, month - 1, day + 1);
}

/** Check the form and build the POST /acks body, or say what is wrong with each field. */
export function validateAckForm(values: AckFormValues, finding: Finding, hostId: number, now: number): AckFormResult {
  const errors: AckFormErrors = {};
  const reason = values.reason.trim();
  if (reason.length < REASON_MIN) errors.reason = `Give a reason of at least ${REASON_MIN} characters.`;
  else if (reason.length > REASON_MAX) errors.reason = `Keep the reason under ${REASON_MAX + 1} characters.`;
  let expiresAt: string | null = null;
  if (values.expiresOn) {
    const expiry = expiryFromDate(values.expiresOn);
    if (!expiry) errors.expiresOn = "Enter a valid date.";
    else if (expiry.getTime() <= now) errors.expiresOn = "The expiry date must be today or later.";
    else expiresAt = expiry.toISOString();
  }
  if (errors.reason || errors.expiresOn) return { ok: false, errors };
  return {
    ok: true,
    body: {
      rule: finding.rule,
      host_id: values.scope === "host" ? hostId : null,
      finding_key: values.target === "finding" ? finding.key : null,
      reason,
      expires_at: expiresAt,
    },
  };
}
