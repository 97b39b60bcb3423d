/** The bearer token Prometheus scrapes /metrics with (admin): whether set, create or rotate, delete. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useApi } from "../../../api/context";
import { queryKeys } from "../../../lib/query-keys";
import { request } from "../../alerts/api/request";
import type { MetricsTokenCreated, MetricsTokenState } from "./types";

export function useMetricsToken() {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.metricsToken(),
    queryFn: (): Promise<MetricsTokenState> => request(api, "GET", "/metrics-token"),
  });
}

/** A new token, replacing the previous one at once. */
export function useCreateMetricsToken() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (): Promise<MetricsTokenCreated> => request(api, "POST", "/metrics-token"),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.metricsToken() }),
  });
}

export function useDeleteMetricsToken() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (): Promise<void> => request(api, "DELETE", "/metrics-token"),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.metricsToken() }),
  });
}
