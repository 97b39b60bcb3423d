/** Turn the access-log API's points into chart rows: rates per status and cache class, ratios, gaps. */
import type { ChartRow } from "../../../components/charts";
import type { AccessLogPoint } from "../api/types";

/** Status classes with the codes nginx operators look for split out, so the stack adds up. */
export const STATUS_KEYS = [
  "s_2xx",
  "s_3xx",
  "s_1xx",
  "s_4xx_other",
  "s_499",
  "s_5xx_other",
  "s_500",
  "s_502",
  "s_503",
  "s_504",
] as const;

/** Cache statuses, the four that count as served from the cache first. */
export const CACHE_KEYS = [
  "c_hit",
  "c_stale",
  "c_updating",
  "c_revalidated",
  "c_miss",
  "c_expired",
  "c_bypass",
] as const;

export const LATENCY_KEYS = ["rt_p50", "rt_p90", "rt_p95", "rt_p99"] as const;
export const UPSTREAM_LATENCY_KEYS = ["ut_p50", "ut_p90", "ut_p95", "ut_p99"] as const;

const ROW_KEYS = [
  "requests",
  "req_per_s",
  "hit_ratio",
  "share_5xx",
  "share_499",
  ...LATENCY_KEYS,
  ...UPSTREAM_LATENCY_KEYS,
  ...STATUS_KEYS,
  ...CACHE_KEYS,
] as const;

export type TrafficRow = { t: number } & Record<(typeof ROW_KEYS)[number], number | null>;

function num(value: number | null | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** `a − b − …`, never below zero; null when the total is unknown (missing parts count as 0). */
function remainder(total: number | null, ...parts: (number | null)[]): number | null {
  if (total === null) return null;
  return Math.max(0, parts.reduce<number>((left, part) => left - (part ?? 0), total));
}

/**
 * Counts per second of the point's own interval. The API's req_per_s is requests over that
 * interval, so the same factor turns any of its counts into a rate; `stepS` is the fallback for
 * a point with no request (where every count is zero anyway).
 */
export function rateFactor(point: Pick<AccessLogPoint, "requests" | "req_per_s">, stepS: number): number | null {
  const requests = num(point.requests);
  const perSecond = num(point.req_per_s);
  if (requests !== null && requests > 0 && perSecond !== null) return perSecond / requests;
  return stepS > 0 ? 1 / stepS : null;
}

/** One chart row from one API point. */
export function toTrafficRow(point: AccessLogPoint, stepS: number): TrafficRow {
  const factor = rateFactor(point, stepS);
  const rate = (count: number | null | undefined): number | null => {
    const value = num(count);
    return value === null || factor === null ? null : value * factor;
  };
  const s4xx = num(point.status_4xx);
  const s499 = num(point.status_499);
  const s5xx = num(point.status_5xx);
  const s500 = num(point.status_500);
  const s502 = num(point.status_502);
  const s503 = num(point.status_503);
  const s504 = num(point.status_504);
  return {
    t: Date.parse(point.ts),
    requests: num(point.requests),
    req_per_s: num(point.req_per_s),
    hit_ratio: num(point.hit_ratio),
    share_5xx: num(point.share_5xx),
    share_499: num(point.share_499),
    rt_p50: num(point.request_time_p50_s),
    rt_p90: num(point.request_time_p90_s),
    rt_p95: num(point.request_time_p95_s),
    rt_p99: num(point.request_time_p99_s),
    ut_p50: num(point.upstream_time_p50_s),
    ut_p90: num(point.upstream_time_p90_s),
    ut_p95: num(point.upstream_time_p95_s),
    ut_p99: num(point.upstream_time_p99_s),
    s_1xx: rate(point.status_1xx),
    s_2xx: rate(point.status_2xx),
    s_3xx: rate(point.status_3xx),
    s_4xx_other: rate(remainder(s4xx, s499)),
    s_499: rate(s499),
    s_5xx_other: rate(remainder(s5xx, s500, s502, s503, s504)),
    s_500: rate(s500),
    s_502: rate(s502),
    s_503: rate(s503),
    s_504: rate(s504),
    c_hit: rate(point.cache_hit),
    c_stale: rate(point.cache_stale),
    c_updating: rate(point.cache_updating),
    c_revalidated: rate(point.cache_revalidated),
    c_miss: rate(point.cache_miss),
    c_expired: rate(point.cache_expired),
    c_bypass: rate(point.cache_bypass),
  };
}

function gapRow(t: number): TrafficRow {
  const row = { t } as TrafficRow;
  for (const key of ROW_KEYS) row[key] = null;
  return row;
}

/**
 * Chart rows in time order, with an empty row inside every hole longer than two steps: the API
 * omits intervals without a sample, and without a null the chart would draw across the hole.
 */
export function toTrafficRows(points: readonly AccessLogPoint[], stepS: number): ChartRow[] {
  const rows = points.map((p) => toTrafficRow(p, stepS)).filter((row) => !Number.isNaN(row.t));
  rows.sort((a, b) => a.t - b.t);
  const maxGapMs = Math.max(stepS, 1) * 2 * 1000;
  const out: TrafficRow[] = [];
  for (const row of rows) {
    const previous = out[out.length - 1];
    if (previous && row.t - previous.t > maxGapMs) out.push(gapRow(previous.t + (row.t - previous.t) / 2));
    out.push(row);
  }
  return out;
}

/** Whether any row has a value for any of the keys (an empty chart may need a reason). */
export function hasValues(rows: readonly ChartRow[], keys: readonly string[]): boolean {
  return rows.some((row) => keys.some((key) => typeof row[key] === "number"));
}
