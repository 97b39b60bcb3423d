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
