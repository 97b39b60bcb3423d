/** Session queries: who is logged in, log in, log out. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type ApiClient, ApiError, unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import type { User } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";

/** The current user, or null when there is no session (401). */
export async function fetchMe(api: ApiClient): Promise<User | null> {
  try {
    return await unwrap(api.GET("/api/v1/auth/me"));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

/** The logged-in user (null when logged out). */
export function useMe() {
  const api = useApi();
  return useQuery({ queryKey: queryKeys.me(), queryFn: () => fetchMe(api), staleTime: 60_000 });
}

/** Log in; on success the session user is cached so guarded pages render at once. */
export function useLogin() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { username: string; password: string }) =>
      unwrap(api.POST("/api/v1/auth/login", { body })),
    onSuccess: (user) => {
      queryClient.setQueryData(queryKeys.me(), user);
    },
  });
}

/** Log out and forget every cached server answer of that session. */
export function useLogout() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/auth/logout")),
    onSuccess: () => {
      queryClient.clear();
      queryClient.setQueryData(queryKeys.me(), null);
    },
  });
}
