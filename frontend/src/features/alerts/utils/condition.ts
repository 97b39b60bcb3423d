/** A rule's condition in one line, as the rules list shows it: "> 0 over 2m for 1m". */
import { formatDuration } from "../../../lib/format";
import type { RuleBody } from "../api/types";

type ConditionFields = Pick<RuleBody, "op" | "threshold" | "clear_threshold" | "window_s" | "for_s">;

export function conditionText(rule: ConditionFields): string {
  let text = `${rule.op} ${formatNumber(rule.threshold)} over ${formatDuration(rule.window_s)}`;
  if (rule.for_s > 0) text += ` for ${formatDuration(rule.for_s)}`;
  if (rule.clear_threshold !== null && rule.clear_threshold !== rule.threshold) {
    text += `, clears at ${formatNumber(rule.clear_threshold)}`;
  }
  return text;
}

/** Thresholds as typed: no thousands separators or rounding, so "0.005" stays "0.005". */
function formatNumber(value: number): string {
  return String(value);
}
