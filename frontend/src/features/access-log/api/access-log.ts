/** A host's access-log figures (GET /hosts/{id}/access-log) and how live samples refresh them. */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import type { TimeRange } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";
import { LIVE_RANGES } from "../../fleet/api/live-cache";
import type { HostAccessLog } from "./types";

// Live ranges are refreshed by the host's samples (see live-events); long ones poll like the series.
const LONG_RANGE_POLL_MS = 60_000;

/** The query of a preset range ending now (on the server's clock), of one site or all (null). */
export function accessLogQuery(range: TimeRange, site: string | null) {
  return site === null ? { range } : { range, site };
}

export function useHostAccessLog(hostId: number, range: TimeRange, site: string | null) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.hosts.accessLog(hostId, range, site),
    queryFn: async (): Promise<HostAccessLog> =>
      unwrap(
        api.GET("/api/v1/hosts/{host_id}/access-log", {
          params: { path: { host_id: hostId }, query: accessLogQuery(range, site) },
        }),
      ),
    refetchInterval: LIVE_RANGES.includes(range) ? false : LONG_RANGE_POLL_MS,
    placeholderData: keepPreviousData,
  });
}
