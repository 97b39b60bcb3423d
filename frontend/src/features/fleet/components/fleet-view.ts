/**
 * What the fleet page shows (sort, page, search, statuses), kept in the URL so a reload or a
 * shared link gives the same view. The label filter has its own parameter (lib/labels).
 */
import type { HostStatus } from "../../../api/types";
import type { SortDirection } from "../../../lib/sort";
import { FLEET_COLUMNS, type FleetColumn, initialDirection } from "./fleet-columns";

export const PAGE_SIZES = [25, 50, 100, 200] as const;
export const DEFAULT_PAGE_SIZE = 50;
/** The API's largest page. */
export const MAX_PAGE_SIZE = 500;
export const HOST_STATUSES: readonly HostStatus[] = ["down", "stale", "new", "up"];

export interface FleetView {
  sort: FleetColumn;
  order: SortDirection;
  /** Hosts per page. */
  limit: number;
  /** Index of the first host shown (0-based), a multiple of `limit` when paged by the controls. */
  offset: number;
  /** Part of the hostname; "" shows every host. */
  q: string;
  statuses: HostStatus[];
}

export const DEFAULT_VIEW: FleetView = {
  sort: "hostname",
  order: "asc",
  limit: DEFAULT_PAGE_SIZE,
  offset: 0,
  q: "",
  statuses: [],
};

function isColumn(value: string | null): value is FleetColumn {
  return value !== null && (FLEET_COLUMNS as readonly string[]).includes(value);
}

function isStatus(value: string): value is HostStatus {
  return (HOST_STATUSES as readonly string[]).includes(value);
}

/** A whole number within [min, max] from a URL parameter, or `fallback`. */
function boundedInt(raw: string | null, min: number, max: number, fallback: number): number {
  if (raw === null || !/^\d+$/.test(raw)) return fallback;
  const value = Number(raw);
  return value >= min && value <= max ? value : fallback;
}

/** The view a URL asks for; anything unreadable falls back to the default. */
export function parseFleetView(params: URLSearchParams): FleetView {
  const sort = params.get("sort");
  const order = params.get("order");
  const column = isColumn(sort) ? sort : DEFAULT_VIEW.sort;
  return {
    sort: column,
    order: order === "asc" || order === "desc" ? order : isColumn(sort) ? initialDirection(column) : "asc",
    limit: boundedInt(params.get("limit"), 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE),
    offset: boundedInt(params.get("offset"), 0, 1_000_000, 0),
    q: (params.get("q") ?? "").trim(),
    statuses: [...new Set(params.getAll("status").filter(isStatus))].sort(),
  };
}

/** `params` with the view written in; defaults are left out so URLs stay short. */
export function writeFleetView(params: URLSearchParams, view: FleetView): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const name of ["sort", "order", "limit", "offset", "q", "status"]) next.delete(name);
  if (view.sort !== DEFAULT_VIEW.sort || view.order !== DEFAULT_VIEW.order) {
    next.set("sort", view.sort);
    next.set("order", view.order);
  }
  if (view.limit !== DEFAULT_PAGE_SIZE) next.set("limit", String(view.limit));
  if (view.offset > 0) next.set("offset", String(view.offset));
  if (view.q) next.set("q", view.q);
  for (const status of view.statuses) next.append("status", status);
  return next;
}

/** A header click: the sorted column flips, another starts worst first; back to page one. */
export function sortBy(view: FleetView, column: FleetColumn): FleetView {
  const order = view.sort === column ? (view.order === "asc" ? "desc" : "asc") : initialDirection(column);
  return { ...view, sort: column, order, offset: 0 };
}

/** A new filter (search, statuses) or page size starts again at page one. */
export function refilter(view: FleetView, change: Partial<Pick<FleetView, "q" | "statuses" | "limit">>): FleetView {
  return { ...view, ...change, offset: 0 };
}

export interface PageInfo {
  /** 1-based number of the page shown. */
  page: number;
  pages: number;
  /** 1-based positions of the first and last host shown; 0 and 0 when none. */
  first: number;
  last: number;
  previousOffset: number | null;
  nextOffset: number | null;
}

/** Where a page sits in the `total` hosts the filter matches. */
export function pageInfo(view: Pick<FleetView, "limit" | "offset">, total: number, shown: number): PageInfo {
  const pages = Math.max(1, Math.ceil(total / view.limit));
  const page = Math.floor(view.offset / view.limit) + 1;
  return {
    page,
    pages,
    first: shown > 0 ? view.offset + 1 : 0,
    last: view.offset + shown,
    previousOffset: view.offset > 0 ? Math.max(0, view.offset - view.limit) : null,
    nextOffset: view.offset + view.limit < total ? view.offset + view.limit : null,
  };
}

/** The offset of the last page, for a view whose page lies past the end (hosts went away). */
export function lastPageOffset(limit: number, total: number): number {
  return total === 0 ? 0 : Math.floor((total - 1) / limit) * limit;
}
