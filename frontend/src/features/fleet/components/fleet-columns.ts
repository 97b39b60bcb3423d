/** The fleet table's sortable columns and how each one reads its sort value. */
import type { FleetHost, HostStatus } from "../../../api/types";
import type { SortDirection, SortValue } from "../../../lib/sort";

export type FleetColumn =
  | "hostname"
  | "status"
  | "req_per_s"
  | "active"
  | "waiting"
  | "drops_per_s"
  | "cpu_pct"
  | "mem_used_pct"
  | "fds"
  | "last_seen_at"
  | "score"
  | "errors"
  | "warnings"
  | "cache_hit_ratio"
  | "request_time_p95_s"
  | "share_5xx";

/** Worst first when sorted ascending, so trouble comes to the top with one click. */
const STATUS_ORDER: Record<HostStatus, number> = { down: 0, stale: 1, new: 2, up: 3 };

export const FLEET_SORT_ACCESSORS: Record<FleetColumn, (host: FleetHost) => SortValue> = {
  hostname: (h) => h.hostname,
  status: (h) => STATUS_ORDER[h.status],
  req_per_s: (h) => h.req_per_s,
  active: (h) => h.active,
  waiting: (h) => h.waiting,
  drops_per_s: (h) => h.drops_per_s,
  cpu_pct: (h) => h.cpu_pct,
  mem_used_pct: (h) => h.mem_used_pct,
  // Closest to its limit first is what an operator looks for, not the raw count.
  fds: (h) => (h.fds_open != null && h.fds_limit ? h.fds_open / h.fds_limit : h.fds_open),
  last_seen_at: (h) => (h.last_seen_at ? Date.parse(h.last_seen_at) : null),
  // From the latest analysis, muted findings left out; null until the config is analysed.
  score: (h) => h.score,
  errors: (h) => h.findings?.error,
  warnings: (h) => h.findings?.warning,
  // From the access log over the last 15 minutes; null when not measured (sorted last).
  cache_hit_ratio: (h) => h.cache_hit_ratio,
  request_time_p95_s: (h) => h.request_time_p95_s,
  share_5xx: (h) => h.share_5xx,
};

/** Columns whose worst value is the lowest. */
const LOWEST_FIRST: ReadonlySet<FleetColumn> = new Set(["hostname", "status", "score", "cache_hit_ratio"]);

/**
 * Figures start with the biggest value; names and statuses start at the top of the order; the
 * score and the cache hit ratio start at the lowest, so that in every case the first click puts
 * the worst first.
 */
export function initialDirection(column: FleetColumn): SortDirection {
  return LOWEST_FIRST.has(column) ? "asc" : "desc";
}
