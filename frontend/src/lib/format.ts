/** Display formatting of units, rates, bytes, percentages and times: the UI's only formatter. */

export const MISSING = "—";

type Maybe = number | null | undefined;

function isNumber(value: Maybe): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Compact count: 950, 1.2k, 3.4M (no unit). */
export function formatCompact(value: Maybe): string {
  if (!isNumber(value)) return MISSING;
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${trim(value / 1e9)}G`;
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e4) return `${trim(value / 1e3)}k`;
  if (abs >= 100 || Number.isInteger(value)) return Math.round(value).toLocaleString("en-US");
  return trim(value);
}

/** Up to three significant digits, without trailing zeros. */
function trim(value: number): string {
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  return String(Number(value.toFixed(digits)));
}

/** Whole-number count with thousands separators (connections, fds). */
export function formatCount(value: Maybe): string {
  if (!isNumber(value)) return MISSING;
  return Math.round(value).toLocaleString("en-US");
}

/** A per-second rate: "12.5/s", "1.2k/s". */
export function formatRate(value: Maybe): string {
  if (!isNumber(value)) return MISSING;
  return `${formatCompact(value)}/s`;
}

/** A percentage already on the 0–100 scale: "12.5%". */
export function formatPercent(value: Maybe, digits = 1): string {
  if (!isNumber(value)) return MISSING;
  return `${value.toFixed(digits)}%`;
}

/**
 * A ratio on the 0–1 scale as a percentage: "87.3%". Small non-zero shares keep two decimals
 * ("0.04%") and the tiniest read "<0.01%", so a rare 5xx never shows as "0.0%".
 */
export function formatRatio(value: Maybe, digits = 1): string {
  if (!isNumber(value)) return MISSING;
  const pct = value * 100;
  if (pct === 0) return "0%";
  if (Math.abs(pct) < 0.01) return pct > 0 ? "<0.01%" : ">-0.01%";
  if (Math.abs(pct) < 1) return `${pct.toFixed(2)}%`;
  return `${pct.toFixed(digits)}%`;
}

/**
 * A duration given in seconds (nginx's $request_time) at a readable unit: "0 ms", "0.5 ms",
 * "12.3 ms", "850 ms", "1.25 s", "95 s". Three significant digits at most.
 */
export function formatLatency(seconds: Maybe): string {
  if (!isNumber(seconds)) return MISSING;
  if (seconds === 0) return "0 ms";
  const ms = trim(seconds * 1000);
  // 0.9996 s rounds to "1000 ms": past that point seconds read better.
  if (Math.abs(Number(ms)) < 1000) return `${ms} ms`;
  return `${trim(seconds)} s`;
}

/** Binary byte sizes: "512 B", "1.5 KiB", "24 GiB". */
export function formatBytes(value: Maybe): string {
  if (!isNumber(value)) return MISSING;
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let scaled = Math.abs(value);
  let unit = 0;
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024;
    unit += 1;
  }
  const sign = value < 0 ? "-" : "";
  return `${sign}${unit === 0 ? String(scaled) : trim(scaled)} ${units[unit] ?? "B"}`;
}

/** Open file descriptors against their limit: "40 / 1,024". */
export function formatUsage(used: Maybe, limit: Maybe): string {
  if (!isNumber(used)) return MISSING;
  return isNumber(limit) ? `${formatCount(used)} / ${formatCount(limit)}` : formatCount(used);
}

/** How long ago an RFC 3339 time was, relative to `now` (ms): "12 s ago", "3 h ago". */
export function formatRelativeTime(iso: string | null | undefined, now: number): string {
  if (!iso) return "never";
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return MISSING;
  const seconds = Math.round((now - then) / 1000);
  // Small negative values are clock skew between browser and server, not the future.
  if (seconds < 5) return seconds < -60 ? "in the future" : "just now";
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} d ago`;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** Local date and time to the second: "2026-11-21 10:04:05". */
export function formatDateTime(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return MISSING;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return MISSING;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

/** Chart axis tick for a time in ms: "10:04", or "11-21 10:04" when the span covers days. */
export function formatAxisTime(ms: number, spanMs: number): string {
  const date = new Date(ms);
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return spanMs > 36 * 3600 * 1000 ? `${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time}` : time;
}

const DURATION_UNITS: readonly [string, number][] = [
  ["d", 86_400],
  ["h", 3_600],
  ["m", 60],
  ["s", 1],
];

/**
 * A duration in whole seconds as the rule editor writes it: "30s", "2m", "1h30m", "0s".
 * `maxParts` keeps only the largest units ("3d4h" of 3d4h5m7s), rounding the rest down.
 */
export function formatDuration(seconds: Maybe, maxParts = DURATION_UNITS.length): string {
  if (!isNumber(seconds) || seconds < 0) return MISSING;
  let rest = Math.round(seconds);
  if (rest === 0) return "0s";
  const parts: string[] = [];
  for (const [unit, size] of DURATION_UNITS) {
    if (parts.length >= maxParts) break;
    const count = Math.floor(rest / size);
    if (count > 0) {
      parts.push(`${count}${unit}`);
      rest -= count * size;
    } else if (parts.length > 0) {
      // "1h0m5s" rounded to two parts is "1h", not "1h5s".
      parts.push("");
    }
  }
  return parts.join("");
}

/** How long something lasted between two RFC 3339 times, to the two largest units: "1h5m". */
export function formatSpan(fromIso: string | null | undefined, toIso: string | null | undefined): string {
  if (!fromIso || !toIso) return MISSING;
  const ms = Date.parse(toIso) - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return MISSING;
  return formatDuration(ms / 1000, 2);
}

/** A value in a signal's unit: "412 connections", "12.5%", "850 ms", "1.2k req/s". */
export function formatMeasure(value: Maybe, unit: string | null | undefined): string {
  if (!isNumber(value)) return MISSING;
  switch (unit ?? "") {
    case "":
      return formatCompact(value);
    case "%":
    case "percent":
      return formatPercent(value);
    case "ratio":
      return formatRatio(value);
    case "s":
    case "seconds":
      return formatLatency(value);
    case "bytes":
      return formatBytes(value);
    default:
      return `${formatCompact(value)} ${unit ?? ""}`;
  }
}
