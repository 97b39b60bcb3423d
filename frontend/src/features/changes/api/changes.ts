/** Recommended changes and rollouts: previews, the change workflow, and the lists that follow it. */
import { type QueryClient, keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import { type ChangeFilter, queryKeys } from "../../../lib/query-keys";
import { readImpact } from "../utils/impact";
import type { Change, ChangeDetail, ChangePage, Overrides, Proposal, Rollout, RolloutCreate } from "./types";
import { IN_FLIGHT } from "./types";

// Live `change` events refresh these at once; polling is the fallback when the stream is down.
const IN_FLIGHT_POLL_MS = 2_000;
const MEASURING_POLL_MS = 10_000;
const IDLE_POLL_MS = 30_000;

/** A change's workflow moves lists, details, rollouts and (once applied) the host's analysis. */
function refreshAfterChange(queryClient: QueryClient) {
  void queryClient.invalidateQueries({ queryKey: queryKeys.changes.all() });
  void queryClient.invalidateQueries({ queryKey: queryKeys.rollouts.all() });
}

/** How often to re-read a change: fast while the agent works, slower while its impact is measured. */
export function changePollInterval(change: Pick<Change, "status" | "impact"> | undefined): number | false {
  if (!change) return false;
  if (IN_FLIGHT.has(change.status)) return IN_FLIGHT_POLL_MS;
  if (change.status === "verified" && readImpact(change.impact)?.status !== "measured") return MEASURING_POLL_MS;
  return change.status === "proposed" ? IDLE_POLL_MS : false;
}

/**
 * The engine's checked diff for some findings, with the operator's adjusted arguments. A POST
 * that stores nothing, cached like a read: the same keys, values and config give the same diff.
 */
export function useChangePreview(
  hostId: number,
  snapshotId: number,
  findingKeys: readonly string[],
  overrides: Overrides,
  enabled = true,
) {
  const api = useApi();
  const keys = [...findingKeys].sort();
  return useQuery({
    queryKey: queryKeys.changePreview(hostId, snapshotId, keys, overrides),
    queryFn: async (): Promise<Proposal> =>
      unwrap(
        api.POST("/api/v1/hosts/{host_id}/changes/preview", {
          params: { path: { host_id: hostId } },
          body: { finding_keys: keys, overrides },
        }),
      ),
    enabled: enabled && keys.length > 0,
    placeholderData: keepPreviousData,
    staleTime: 60_000,
    refetchOnWindowFocus: false,
  });
}

export function useChanges(filter: ChangeFilter) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.changes.list(filter),
    queryFn: async (): Promise<ChangePage> =>
      unwrap(
        api.GET("/api/v1/changes", {
          params: {
            query: {
              host_id: filter.hostId,
              rollout_id: filter.rolloutId,
              status: filter.status,
              limit: filter.limit ?? 50,
            },
          },
        }),
      ),
    refetchInterval: (query) =>
      query.state.data?.items.some((c) => IN_FLIGHT.has(c.status)) ? IN_FLIGHT_POLL_MS : IDLE_POLL_MS,
  });
}

export function useChange(changeId: number) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.changes.detail(changeId),
    queryFn: async (): Promise<ChangeDetail> =>
      unwrap(api.GET("/api/v1/changes/{change_id}", { params: { path: { change_id: changeId } } })),
    enabled: Number.isInteger(changeId) && changeId > 0,
    refetchInterval: (query) => changePollInterval(query.state.data),
  });
}

export interface ChangeCreateInput {
  findingKeys: readonly string[];
  overrides: Overrides;
  comment: string;
}

/** Store the checked diff as a proposed change (operator+); 422 says why none is offered. */
export function useCreateChange(hostId: number) {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ findingKeys, overrides, comment }: ChangeCreateInput): Promise<Change> =>
      unwrap(
        api.POST("/api/v1/hosts/{host_id}/changes", {
          params: { path: { host_id: hostId } },
          body: { finding_keys: [...findingKeys].sort(), overrides, comment },
        }),
      ),
    onSuccess: () => refreshAfterChange(queryClient),
  });
}

export interface ChangeActionInput {
  changeId: number;
  comment: string;
}

/** Approve, reject or roll back a change (operator+); a refusal (409) also refreshes what moved. */
function useChangeAction(action: "approve" | "reject" | "rollback") {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ changeId, comment }: ChangeActionInput): Promise<Change> => {
      const options = { params: { path: { change_id: changeId } }, body: { comment } };
      if (action === "approve") return unwrap(api.POST("/api/v1/changes/{change_id}/approve", options));
      if (action === "reject") return unwrap(api.POST("/api/v1/changes/{change_id}/reject", options));
      return unwrap(api.POST("/api/v1/changes/{change_id}/rollback", options));
    },
    onSettled: () => refreshAfterChange(queryClient),
  });
}

export const useApproveChange = () => useChangeAction("approve");
export const useRejectChange = () => useChangeAction("reject");
export const useRollbackChange = () => useChangeAction("rollback");

export function useRollouts() {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.rollouts.list(),
    queryFn: async (): Promise<Rollout[]> => unwrap(api.GET("/api/v1/rollouts")),
    refetchInterval: (query) =>
      query.state.data?.some((r) => r.status === "running") ? MEASURING_POLL_MS : IDLE_POLL_MS,
  });
}

export function useRollout(rolloutId: number) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.rollouts.detail(rolloutId),
    queryFn: async (): Promise<Rollout> =>
      unwrap(api.GET("/api/v1/rollouts/{rollout_id}", { params: { path: { rollout_id: rolloutId } } })),
    enabled: Number.isInteger(rolloutId) && rolloutId > 0,
    refetchInterval: (query) => (query.state.data?.status === "running" ? IN_FLIGHT_POLL_MS * 2 : false),
  });
}

/** Start a rollout (operator+): the canary wave is approved at once. */
export function useCreateRollout() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: RolloutCreate): Promise<Rollout> => unwrap(api.POST("/api/v1/rollouts", { body })),
    onSuccess: () => refreshAfterChange(queryClient),
  });
}
