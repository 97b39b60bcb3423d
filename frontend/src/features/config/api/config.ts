/** A host's config dump with its latest analysis, and its score history. */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import { analysisKeys } from "./keys";
import type { HostConfig, ScorePoint, ScoreRange } from "./types";

// The first analysis runs shortly after the first push: poll quickly until it exists.
const PENDING_POLL_MS = 3_000;
const CONFIG_POLL_MS = 60_000;

/** True while the backend has a config but no analysis of it yet. */
export function isAnalysisPending(config: HostConfig | undefined): boolean {
  return config !== undefined && config.snapshot !== null && config.analysis === null;
}

export function useHostConfig(hostId: number) {
  const api = useApi();
  return useQuery({
    queryKey: analysisKeys.config(hostId),
    queryFn: async (): Promise<HostConfig> =>
      unwrap(api.GET("/api/v1/hosts/{host_id}/config", { params: { path: { host_id: hostId } } })),
    refetchInterval: (query) =>
      isAnalysisPending(query.state.data) || query.state.data?.snapshot === null ? PENDING_POLL_MS : CONFIG_POLL_MS,
  });
}

export function useHostScores(hostId: number, range: ScoreRange) {
  const api = useApi();
  return useQuery({
    queryKey: analysisKeys.scores(hostId, range),
    queryFn: async (): Promise<{ points: ScorePoint[] }> =>
      unwrap(api.GET("/api/v1/hosts/{host_id}/scores", { params: { path: { host_id: hostId }, query: { range } } })),
    refetchInterval: CONFIG_POLL_MS,
    placeholderData: keepPreviousData,
  });
}
