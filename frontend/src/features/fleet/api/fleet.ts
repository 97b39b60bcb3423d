/** Fleet summary and the label values offered by the filter. */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import { queryKeys } from "../../../lib/query-keys";

// Hosts turn stale or down by *not* pushing, which produces no live event, so poll as well.
const FLEET_POLL_MS = 30_000;

/** Every host matching all of the given `key:value` label filters. */
export function useFleet(labelFilter: readonly string[]) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.fleet.list(labelFilter),
    queryFn: () =>
      unwrap(
        api.GET("/api/v1/fleet", {
          params: { query: labelFilter.length ? { label: [...labelFilter] } : {} },
        }),
      ),
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
