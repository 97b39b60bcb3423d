/** The fleet table's sortable columns: the server sorts by them (GET /fleet?sort=&order=). */
import type { operations } from "../../../api/schema";
import type { SortDirection } from "../../../lib/sort";

/** The `sort` values the API accepts. */
export type FleetColumn = NonNullable<NonNullable<operations["list_fleet_api_v1_fleet_get"]["parameters"]["query"]>["sort"]>;

/** Every column, in the table's order; typed so a column the API drops fails to compile. */
export const FLEET_COLUMNS = [
  "hostname",
  "status",
  "score",
  "errors",
  "warnings",
  "req_per_s",
  "active",
  "waiting",
  "drops_per_s",
  "cache_hit_ratio",
  "request_time_p95_s",
  "share_5xx",
  "cpu_pct",
  "mem_used_pct",
  "fds",
  "last_seen_at",
] as const satisfies readonly FleetColumn[];

/** Columns whose worst value is the lowest (status ranks down, stale, new, up). */
const LOWEST_FIRST: ReadonlySet<FleetColumn> = new Set(["hostname", "status", "score", "cache_hit_ratio"]);

/**
 * Figures start with the biggest value; names and statuses start at the top of the order; the
 * score and the cache hit ratio start at the lowest, so that in every case the first click puts
 * the worst first. Hosts without a value come last either way (the server's rule).
 */
export function initialDirection(column: FleetColumn): SortDirection {
  return LOWEST_FIRST.has(column) ? "asc" : "desc";
}
