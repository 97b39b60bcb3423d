/** The fleet's pages and summary (sorted, filtered and paged by the server) and its labels. */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import type { components } from "../../../api/schema";
import type { HostStatus } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";
import type { FleetView } from "../components/fleet-view";

export type FleetPage = components["schemas"]["FleetPage"];
export type FleetSummary = components["schemas"]["FleetSummary"];

// Hosts turn stale or down by *not* pushing, which produces no live event, so poll as well.
const FLEET_POLL_MS = 30_000;

/** Query parameters shared by the page and the summary; empty filters are left out. */
function filterQuery(labelFilter: readonly string[], q: string, statuses: readonly HostStatus[]) {
  return {
    ...(labelFilter.length ? { label: [...labelFilter] } : {}),
    ...(q ? { q } : {}),
    ...(statuses.length ? { status: [...statuses] } : {}),
  };
}

/** One page of the hosts matching every `key:value` label filter and the view's filters. */
export function useFleet(labelFilter: readonly string[], view: FleetView) {
  const api = useApi();
  const { sort, order, limit, offset, q, statuses } = view;
  return useQuery({
    queryKey: queryKeys.fleet.list(labelFilter, { sort, order, limit, offset, q, statuses }),
    queryFn: () =>
      unwrap(
        api.GET("/api/v1/fleet", {
          params: { query: { ...filterQuery(labelFilter, q, statuses), sort, order, limit, offset } },
        }),
      ),
    refetchInterval: FLEET_POLL_MS,
    // A new page, sort or filter keeps showing the current rows until its own arrive.
    placeholderData: keepPreviousData,
  });
}

/** Counts by status, load and findings over the hosts the same filters match. */
export function useFleetSummary(labelFilter: readonly string[], view: Pick<FleetView, "q" | "statuses">) {
  const api = useApi();
  const { q, statuses } = view;
  return useQuery({
    queryKey: queryKeys.fleet.summary(labelFilter, { q, statuses }),
    queryFn: () =>
      unwrap(api.GET("/api/v1/fleet/summary", { params: { query: filterQuery(labelFilter, q, statuses) } })),
    refetchInterval: FLEET_POLL_MS,
    placeholderData: keepPreviousData,
  });
}

/** Every label key with its values in use across the fleet. */
export function useFleetLabels() {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.fleet.labels(),
    queryFn: () => unwrap(api.GET("/api/v1/fleet/labels")),
    staleTime: 30_000,
  });
}
