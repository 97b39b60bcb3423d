/** One host: its detail, its metric series and label edits. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import type { HostDetail, Labels, TimeRange } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";
import { LIVE_RANGES } from "../../fleet/api/live-cache";

// Long ranges are aggregated server-side and not appended to live; refresh them now and then.
const SERIES_POLL_MS = 60_000;

export function useHost(hostId: number) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.hosts.detail(hostId),
    queryFn: () => unwrap(api.GET("/api/v1/hosts/{host_id}", { params: { path: { host_id: hostId } } })),
    enabled: Number.isInteger(hostId) && hostId > 0,
    refetchInterval: 30_000,
  });
}

export function useHostSeries(hostId: number, range: TimeRange) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.hosts.series(hostId, range),
    queryFn: () =>
      unwrap(
        api.GET("/api/v1/hosts/{host_id}/series", {
          params: { path: { host_id: hostId }, query: { range } },
        }),
      ),
    refetchInterval: LIVE_RANGES.includes(range) ? false : SERIES_POLL_MS,
    placeholderData: keepPreviousData,
  });
}

/** Replace a host's labels (operator+); the fleet list is refetched since filters may change. */
export function useUpdateHostLabels(hostId: number) {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (labels: Labels) =>
      unwrap(
        api.PATCH("/api/v1/hosts/{host_id}", {
          params: { path: { host_id: hostId } },
          body: { labels },
        }),
      ),
    onSuccess: (host: HostDetail) => {
      queryClient.setQueryData(queryKeys.hosts.detail(hostId), host);
      void queryClient.invalidateQueries({ queryKey: queryKeys.fleet.all() });
    },
  });
}

/** Revoke the host's token so that its agent may enrol again once (admin; audited). */
export function useResetEnrolment(hostId: number) {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/v1/hosts/{host_id}/reset-enrolment", {
          params: { path: { host_id: hostId } },
        }),
      ),
    onSuccess: (host: HostDetail) => {
      queryClient.setQueryData(queryKeys.hosts.detail(hostId), host);
    },
  });
}
