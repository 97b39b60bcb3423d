/** Sorting and derived figures of the access-log tables. */
import type { SortDirection, SortValue } from "../../../lib/sort";
import type { AccessLogTopPath, AccessLogUpstream } from "../api/types";

export type UpstreamColumn = "upstream" | "attempts" | "errors" | "error_share" | "p50" | "p95" | "p99";

export const UPSTREAM_SORT_ACCESSORS: Record<UpstreamColumn, (u: AccessLogUpstream) => SortValue> = {
  upstream: (u) => u.upstream,
  attempts: (u) => u.attempts,
  errors: (u) => u.errors,
  error_share: (u) => u.error_share,
  p50: (u) => u.response_time_p50_s,
  p95: (u) => u.response_time_p95_s,
  p99: (u) => u.response_time_p99_s,
};

/** Upstreams start with the most attempts, errors and the slowest; addresses start at A. */
export function upstreamInitialDirection(column: UpstreamColumn): SortDirection {
  return column === "upstream" ? "asc" : "desc";
}

/** Mean time of a path's requests: the API's, else from its sum; null when none was counted. */
export function meanTime(path: Pick<AccessLogTopPath, "requests" | "time_sum_s" | "time_mean_s">): number | null {
  if (typeof path.time_mean_s === "number") return path.time_mean_s;
  return path.requests > 0 ? path.time_sum_s / path.requests : null;
}
