/** Turn the series API's points into chart rows: stacked connection states, percents, gaps. */
import type { SeriesPoint } from "../../../api/types";
import type { ChartRow } from "../../../components/charts";

export const CHART_KEYS = [
  "reading",
  "writing",
  "waiting",
  "active",
  "req_per_s",
  "drops_per_s",
  "cpu_pct",
  "mem_pct",
  "fds_open",
  "fds_limit",
] as const;

export type HostChartRow = { t: number } & Record<(typeof CHART_KEYS)[number], number | null>;

function num(value: number | null | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * Active as the sum of its stacked parts, so the top of the stack is exactly the total shown.
 * (The API's own `active` is the bucket maximum, which would not line up with averaged parts.)
 */
export function stackedActive(point: Pick<SeriesPoint, "reading" | "writing" | "waiting">): number | null {
  const parts = [num(point.reading), num(point.writing), num(point.waiting)];
  if (parts.some((p) => p === null)) return null;
  return (parts as number[]).reduce((a, b) => a + b, 0);
}

function memPercent(point: SeriesPoint): number | null {
  const used = num(point.mem_used_bytes);
  const total = num(point.mem_total_bytes);
  return used !== null && total ? (used / total) * 100 : null;
}

/** One chart row from one API point. */
export function toChartRow(point: SeriesPoint): HostChartRow {
  return {
    t: Date.parse(point.ts),
    reading: num(point.reading),
    writing: num(point.writing),
    waiting: num(point.waiting),
    active: stackedActive(point),
    req_per_s: num(point.req_per_s),
    drops_per_s: num(point.drops_per_s),
    cpu_pct: num(point.cpu_pct),
    mem_pct: memPercent(point),
    fds_open: num(point.fds_open),
    fds_limit: num(point.fds_limit),
  };
}

function gapRow(t: number): HostChartRow {
  const row = { t } as HostChartRow;
  for (const key of CHART_KEYS) row[key] = null;
  return row;
}

/**
 * Chart rows in time order, with an empty row inside every hole longer than two steps:
 * the API omits empty buckets, and without a null the chart would draw a line across the hole.
 */
export function toChartRows(points: readonly SeriesPoint[], stepS: number): ChartRow[] {
  const rows = points.map(toChartRow).filter((row) => !Number.isNaN(row.t));
  rows.sort((a, b) => a.t - b.t);
  const maxGapMs = Math.max(stepS, 1) * 2 * 1000;
  const out: HostChartRow[] = [];
  for (const row of rows) {
    const previous = out[out.length - 1];
    if (previous && row.t - previous.t > maxGapMs) out.push(gapRow(previous.t + (row.t - previous.t) / 2));
    out.push(row);
  }
  return out;
}
