/** Reading a change's impact card, which the API sends as a free-form object. */
import { formatBytes, formatCompact, formatPercent, formatRate } from "../../../lib/format";
import type { Impact, ImpactMetric } from "../api/types";

const STATUSES: ReadonlySet<string> = new Set(["waiting", "measured", "insufficient_data"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function numberOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function timeRange(value: unknown): [string, string] {
  return Array.isArray(value) && typeof value[0] === "string" && typeof value[1] === "string"
    ? [value[0], value[1]]
    : ["", ""];
}

function readMetric(raw: unknown): ImpactMetric | null {
  if (!isRecord(raw)) return null;
  const before = numberOrNull(raw.before);
  const after = numberOrNull(raw.after);
  if (typeof raw.name !== "string" || before === null || after === null) return null;
  return {
    name: raw.name,
    label: typeof raw.label === "string" ? raw.label : raw.name,
    unit: typeof raw.unit === "string" ? raw.unit : "",
    before,
    after,
    change_pct: numberOrNull(raw.change_pct),
    significant: raw.significant === true,
    statement: typeof raw.statement === "string" ? raw.statement : "",
  };
}

/** The impact card when it has the backend's shape (a known status), else null. */
export function readImpact(raw: Record<string, unknown> | null | undefined): Impact | null {
  if (!raw || typeof raw.status !== "string" || !STATUSES.has(raw.status)) return null;
  const metrics = Array.isArray(raw.metrics) ? raw.metrics.map(readMetric).filter((m) => m !== null) : [];
  return {
    status: raw.status as Impact["status"],
    window_s: numberOrNull(raw.window_s) ?? 0,
    before: timeRange(raw.before),
    after: timeRange(raw.after),
    metrics,
    summary: typeof raw.summary === "string" ? raw.summary : "",
    score_before: numberOrNull(raw.score_before),
    score_after: numberOrNull(raw.score_after),
  };
}

/** A metric's value in its unit: bytes as KiB/MiB, shares as %, rates per second. */
export function formatMetric(metric: Pick<ImpactMetric, "unit">, value: number): string {
  switch (metric.unit) {
    case "bytes":
      return formatBytes(value);
    case "%":
      return formatPercent(value);
    case "% of a core":
      return `${formatPercent(value)} of a core`;
    case "req/s":
    case "conn/s":
      return formatRate(value);
    default:
      return formatCompact(value);
  }
}

/** "+12.5%", "−3%", or "—" when the before-value was zero. */
export function formatChangePct(pct: number | null): string {
  if (pct === null) return "—";
  if (pct === 0) return "0%";
  return `${pct > 0 ? "+" : "−"}${Math.abs(pct)}%`;
}

/** A window length in words: "20 s", "5 min". */
export function formatWindow(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
}
