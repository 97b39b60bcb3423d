/** The silence form's draft and its checked conversion to the body the API takes. */
import type { MatcherOp, SilenceCreate, SilenceMatcher } from "../api/types";
import { parseDuration } from "./duration";

export interface MatcherDraft {
  label: string;
  op: MatcherOp;
  value: string;
}

export interface SilenceDraft {
  /** A rule id, or "" for any rule. */
  ruleId: string;
  matchers: MatcherDraft[];
  /** End the silence after a duration from now, or at a given time. */
  endMode: "duration" | "until";
  duration: string;
  /** A `datetime-local` value, read in the browser's time zone. */
  until: string;
  reason: string;
}

export type SilenceCheck = { ok: true; body: SilenceCreate } | { ok: false; error: string };

export const MAX_SILENCE_S = 90 * 86_400;
// The API's label names: a letter or underscore, then letters, digits, _ . - (64 at most).
const LABEL_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
const MIN_REASON = 3;

export const EMPTY_MATCHER: MatcherDraft = { label: "", op: "=", value: "" };

export function newSilenceDraft(initial: { ruleId?: string; host?: string } = {}): SilenceDraft {
  return {
    ruleId: initial.ruleId ?? "",
    matchers: [initial.host ? { label: "host", op: "=", value: initial.host } : { ...EMPTY_MATCHER }],
    endMode: "duration",
    duration: "2h",
    until: "",
    reason: "",
  };
}

/** Check a draft at `now` (ms); rows left entirely empty are ignored. */
export function checkSilenceDraft(draft: SilenceDraft, now: number): SilenceCheck {
  const matchers: SilenceMatcher[] = [];
  for (const [index, row] of draft.matchers.entries()) {
    const label = row.label.trim();
    const value = row.value.trim();
    if (!label && !value) continue;
    const where = `Matcher ${index + 1}`;
    if (!label) return { ok: false, error: `${where}: the label is empty` };
    if (!LABEL_PATTERN.test(label)) {
      return {
        ok: false,
        error: `${where}: label "${label}" must start with a letter or _ and use only letters, digits, _ . -`,
      };
    }
    if (!value) return { ok: false, error: `${where}: the value is empty` };
    matchers.push({ label, op: row.op, value });
  }
  const ruleId = draft.ruleId ? Number(draft.ruleId) : null;
  if (ruleId === null && matchers.length === 0) {
    return { ok: false, error: "Choose a rule or add at least one matcher: a silence of everything is not allowed" };
  }

  let endsAt: number;
  if (draft.endMode === "duration") {
    const duration = parseDuration(draft.duration, "Duration", { min: 60, max: MAX_SILENCE_S });
    if (!duration.ok) return { ok: false, error: duration.error };
    endsAt = now + duration.seconds * 1000;
  } else {
    endsAt = draft.until ? new Date(draft.until).getTime() : Number.NaN;
    if (!Number.isFinite(endsAt)) return { ok: false, error: "End time is required" };
    if (endsAt <= now) return { ok: false, error: "End time must be in the future" };
    if (endsAt > now + MAX_SILENCE_S * 1000) return { ok: false, error: "End time must be at most 90 days from now" };
  }

  const reason = draft.reason.trim();
  if (!reason) return { ok: false, error: "Reason is required: say why these alerts may stay quiet" };
  if (reason.length < MIN_REASON) return { ok: false, error: `Reason must be at least ${MIN_REASON} characters` };
  return { ok: true, body: { rule_id: ruleId, matchers, ends_at: new Date(endsAt).toISOString(), reason } };
}

/** A matcher as the lists show it: "host=edge-1", "env!=prod". */
export function matcherText(matcher: SilenceMatcher): string {
  return `${matcher.label}${matcher.op}${matcher.value}`;
}
