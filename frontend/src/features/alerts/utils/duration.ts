/** Durations typed in the alert forms ("30s", "2m", "1h30m"), read as whole seconds. */

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };
const PART = /(\d+)\s*([smhd])/gy;

export type DurationResult = { ok: true; seconds: number } | { ok: false; error: string };

export interface DurationLimits {
  /** Smallest accepted value in seconds (0 when absent). */
  min?: number;
  /** Largest accepted value in seconds. */
  max?: number;
}

/**
 * Parse a duration such as "30s", "2m", "1h", "1h30m" or "1d" (units s, m, h, d, largest first,
 * each at most once). A bare number is refused: "5" could mean seconds or minutes.
 */
export function parseDuration(text: string, name: string, limits: DurationLimits = {}): DurationResult {
  const input = text.trim().toLowerCase();
  if (!input) return { ok: false, error: `${name} is required` };
  if (/^\d+$/.test(input)) {
    return { ok: false, error: `${name} needs a unit: ${input}s, ${input}m or ${input}h` };
  }
  let seconds = 0;
  let consumed = 0;
  let lastSize = Infinity;
  PART.lastIndex = 0;
  for (let match = PART.exec(input); match !== null; match = PART.exec(input)) {
    const size = UNIT_SECONDS[match[2] ?? ""] ?? 0;
    if (size >= lastSize) return { ok: false, error: `${name}: give each unit once, largest first (e.g. 1h30m)` };
    lastSize = size;
    seconds += Number(match[1]) * size;
    consumed = PART.lastIndex;
    // Spaces between parts ("1h 30m") are allowed.
    while (input[consumed] === " ") consumed += 1;
    PART.lastIndex = consumed;
  }
  if (consumed !== input.length || consumed === 0) {
    return { ok: false, error: `${name} "${text.trim()}" is not a duration like 30s, 2m, 1h or 1h30m` };
  }
  const min = limits.min ?? 0;
  if (seconds < min) return { ok: false, error: `${name} must be at least ${describe(min)}` };
  if (limits.max !== undefined && seconds > limits.max) {
    return { ok: false, error: `${name} must be at most ${describe(limits.max)}` };
  }
  return { ok: true, seconds };
}

/** A limit in words for the error messages: "1 s", "90 days". */
function describe(seconds: number): string {
  if (seconds % 86_400 === 0 && seconds > 0) return `${seconds / 86_400} d`;
  if (seconds % 3_600 === 0 && seconds > 0) return `${seconds / 3_600} h`;
  if (seconds % 60 === 0 && seconds > 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
