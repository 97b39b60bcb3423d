/** Users (admin): list, create, change role, delete. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import type { UserCreate, UserUpdate } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";

export const MIN_PASSWORD_LENGTH = 12;

export function useUsers() {
  const api = useApi();
  return useQuery({ queryKey: queryKeys.users.all(), queryFn: () => unwrap(api.GET("/api/v1/users")) });
}

function useInvalidateUsers() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: queryKeys.users.all() });
}

export function useCreateUser() {
  const api = useApi();
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: (body: UserCreate) => unwrap(api.POST("/api/v1/users", { body })),
    onSuccess: invalidate,
  });
}

export function useUpdateUser() {
  const api = useApi();
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: ({ userId, body }: { userId: number; body: UserUpdate }) =>
      unwrap(api.PATCH("/api/v1/users/{user_id}", { params: { path: { user_id: userId } }, body })),
    onSuccess: invalidate,
  });
}

export function useDeleteUser() {
  const api = useApi();
  const invalidate = useInvalidateUsers();
  return useMutation({
    mutationFn: (userId: number) =>
      unwrap(api.DELETE("/api/v1/users/{user_id}", { params: { path: { user_id: userId } } })),
    onSuccess: invalidate,
  });
}
