/** The rule editor's draft (text as typed) and its checked conversion to a rule body. */
import type { Labels } from "../../../api/types";
import { formatDuration } from "../../../lib/format";
import { parseLabelList } from "../../../lib/labels";
import type { ComparisonOp, NoDataPolicy, Rule, RuleBody, Severity, Signal } from "../api/types";
import { parseDuration } from "./duration";

export interface RuleDraft {
  key: string;
  name: string;
  description: string;
  enabled: boolean;
  signal: string;
  op: ComparisonOp;
  threshold: string;
  clearThreshold: string;
  minRequests: string;
  window: string;
  forDuration: string;
  keepFiring: string;
  /** Empty: notify once when firing. */
  repeatInterval: string;
  severity: Severity;
  noData: NoDataPolicy;
  /** "env=prod, role=edge"; empty: every host. */
  scope: string;
  channelIds: number[];
}

export type RuleField = keyof RuleDraft;
export type RuleErrors = Partial<Record<RuleField, string>>;
export type RuleCheck = { ok: true; body: RuleBody } | { ok: false; errors: RuleErrors };

const KEY_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const DAY = 86_400;

export const NEW_RULE_DRAFT: RuleDraft = {
  key: "",
  name: "",
  description: "",
  enabled: true,
  signal: "",
  op: ">",
  threshold: "0",
  clearThreshold: "",
  minRequests: "",
  window: "5m",
  forDuration: "0s",
  keepFiring: "0s",
  repeatInterval: "",
  severity: "warning",
  noData: "ok",
  scope: "",
  channelIds: [],
};

function scopeText(scope: Labels): string {
  return Object.entries(scope)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${value}`)
    .join(", ");
}

/** The editor's starting text for a stored rule. */
export function draftFromRule(rule: Rule): RuleDraft {
  return {
    key: rule.key,
    name: rule.name,
    description: rule.description,
    enabled: rule.enabled,
    signal: rule.signal,
    op: rule.op,
    threshold: String(rule.threshold),
    clearThreshold: rule.clear_threshold === null ? "" : String(rule.clear_threshold),
    minRequests: rule.min_requests === null ? "" : String(rule.min_requests),
    window: formatDuration(rule.window_s),
    forDuration: formatDuration(rule.for_s),
    keepFiring: formatDuration(rule.keep_firing_s),
    repeatInterval: rule.repeat_interval_s === null ? "" : formatDuration(rule.repeat_interval_s),
    severity: rule.severity,
    noData: rule.no_data,
    scope: scopeText(rule.scope),
    channelIds: [...rule.channel_ids],
  };
}

function parseNumber(text: string): number | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : null;
}

/** Whether a clear threshold lies on the quiet side of the threshold (or on it). */
function clearsOnQuietSide(op: ComparisonOp, threshold: number, clear: number): boolean {
  return op === ">" || op === ">=" ? clear <= threshold : clear >= threshold;
}

/**
 * Check a draft and build the body the API takes (docs/alerts.md, section 2), or say what is
 * wrong per field. `signal` is the chosen signal's definition: min requests only apply to
 * signals that need requests, and are sent as null for the others.
 */
export function checkRuleDraft(draft: RuleDraft, signal: Signal | undefined): RuleCheck {
  const errors: RuleErrors = {};
  const key = draft.key.trim();
  if (!key) errors.key = "Key is required";
  else if (!KEY_PATTERN.test(key)) errors.key = "Key may use only lowercase letters, digits and dashes (e.g. dropped-connections)";
  const name = draft.name.trim();
  if (!name) errors.name = "Name is required";
  if (!draft.signal) errors.signal = "Choose a signal";

  const threshold = parseNumber(draft.threshold);
  if (threshold === null) errors.threshold = "Threshold must be a number";
  let clear: number | null = null;
  if (draft.clearThreshold.trim()) {
    clear = parseNumber(draft.clearThreshold);
    if (clear === null) errors.clearThreshold = "Clear threshold must be a number, or empty";
    else if (threshold !== null && !clearsOnQuietSide(draft.op, threshold, clear)) {
      const side = draft.op === ">" || draft.op === ">=" ? "at or below" : "at or above";
      errors.clearThreshold = `Clear threshold must be ${side} the threshold (${threshold}) for ${draft.op}`;
    }
  }

  // The API refuses a request minimum on a signal without a request volume.
  let minRequests: number | null = null;
  if (signal?.needs_requests && draft.minRequests.trim()) {
    const value = parseNumber(draft.minRequests);
    if (value === null || !Number.isInteger(value) || value < 1) {
      errors.minRequests = "Min requests must be a whole number of at least 1, or empty";
    } else minRequests = value;
  }

  const window = parseDuration(draft.window, "Window", { min: 10, max: DAY });
  if (!window.ok) errors.window = window.error;
  const forDuration = parseDuration(draft.forDuration, "For", { max: DAY });
  if (!forDuration.ok) errors.forDuration = forDuration.error;
  const keepFiring = parseDuration(draft.keepFiring, "Keep firing", { max: DAY });
  if (!keepFiring.ok) errors.keepFiring = keepFiring.error;
  let repeat: number | null = null;
  if (draft.repeatInterval.trim()) {
    const parsed = parseDuration(draft.repeatInterval, "Repeat interval", { min: 60, max: 7 * DAY });
    if (parsed.ok) repeat = parsed.seconds;
    else errors.repeatInterval = parsed.error;
  }

  const scope = parseLabelList(draft.scope);
  if (!scope.ok) errors.scope = `Scope: ${scope.error}`;

  if (Object.keys(errors).length > 0 || threshold === null || !window.ok || !forDuration.ok || !keepFiring.ok || !scope.ok) {
    return { ok: false, errors };
  }
  return {
    ok: true,
    body: {
      key,
      name,
      description: draft.description.trim(),
      enabled: draft.enabled,
      signal: draft.signal,
      op: draft.op,
      threshold,
      clear_threshold: clear,
      min_requests: minRequests,
      window_s: window.seconds,
      for_s: forDuration.seconds,
      keep_firing_s: keepFiring.seconds,
      repeat_interval_s: repeat,
      severity: draft.severity,
      no_data: draft.noData,
      scope: scope.labels,
      channel_ids: [...draft.channelIds].sort((a, b) => a - b),
    },
  };
}

/** A draft as the preview takes it: a new rule's key and name do not change which hosts match. */
export function previewDraft(draft: RuleDraft): RuleDraft {
  const key = draft.key.trim();
  return { ...draft, key: KEY_PATTERN.test(key) ? key : "preview", name: draft.name.trim() || "Preview" };
}
