/** Enrolment tokens (admin): create, list, revoke. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import type { EnrollmentTokenCreate } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";

export function useEnrollmentTokens() {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.enrollmentTokens.all(),
    queryFn: () => unwrap(api.GET("/api/v1/enrollment-tokens")),
  });
}

export function useCreateEnrollmentToken() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: EnrollmentTokenCreate) => unwrap(api.POST("/api/v1/enrollment-tokens", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.enrollmentTokens.all() }),
  });
}

export function useRevokeEnrollmentToken() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tokenId: number) =>
      unwrap(api.DELETE("/api/v1/enrollment-tokens/{token_id}", { params: { path: { token_id: tokenId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.enrollmentTokens.all() }),
  });
}
