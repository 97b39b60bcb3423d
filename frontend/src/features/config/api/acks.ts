/** Acknowledgements (mutes) of findings: create and remove, then refresh what they change. */
import { type QueryClient, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import { queryKeys } from "../../../lib/query-keys";
import { analysisKeys } from "./keys";
import type { Ack, AckCreate } from "./types";

/** A mute changes findings, scores, fleet columns and the top list: refetch them all. */
function refreshAfterAckChange(queryClient: QueryClient) {
  void queryClient.invalidateQueries({ queryKey: analysisKeys.all() });
  void queryClient.invalidateQueries({ queryKey: queryKeys.fleet.all() });
}

/** Every acknowledgement, to show why a muted finding is muted. */
export function useAcks() {
  const api = useApi();
  return useQuery({
    queryKey: analysisKeys.acks(),
    queryFn: async (): Promise<Ack[]> => unwrap(api.GET("/api/v1/acks")),
  });
}

export function useCreateAck() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: AckCreate): Promise<Ack> => unwrap(api.POST("/api/v1/acks", { body })),
    onSuccess: () => refreshAfterAckChange(queryClient),
  });
}

export function useDeleteAck() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (ackId: number): Promise<void> => {
      await unwrap(api.DELETE("/api/v1/acks/{ack_id}", { params: { path: { ack_id: ackId } } }));
    },
    onSuccess: () => refreshAfterAckChange(queryClient),
  });
}
