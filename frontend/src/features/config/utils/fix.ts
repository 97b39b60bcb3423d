/** Reading a finding's fix, which the API sends as a free-form object. */
import type { FindingFix } from "../api/types";

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

/** The fix when it has the engine's shape (action, directive, args, file, line, context), else null. */
export function readFix(raw: Record<string, unknown> | null): FindingFix | null {
  if (!raw) return null;
  const { action, directive, args, file, line, context, note } = raw;
  if (
    typeof action !== "string" ||
    typeof directive !== "string" ||
    !isStringArray(args) ||
    typeof file !== "string" ||
    typeof line !== "number" ||
    typeof context !== "string"
  ) {
    return null;
  }
  return { action, directive, args, file, line, context, note: typeof note === "string" ? note : "" };
}

/** Actions the engine turns into text edits (nginx_fleet_analyzer.remedy APPLICABLE); others are manual. */
const APPLICABLE_ACTIONS: ReadonlySet<string> = new Set(["set", "add", "remove", "replace"]);

/** Whether a finding's fix can become a recommended diff (the engine's self-check decides the rest). */
export function isMachineFixable(raw: Record<string, unknown> | null): boolean {
  const fix = readFix(raw);
  return fix !== null && APPLICABLE_ACTIONS.has(fix.action);
}
