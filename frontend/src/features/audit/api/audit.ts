/** The audit log (admin). */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import { queryKeys } from "../../../lib/query-keys";

export function useAuditEvents(limit: number) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.audit.list(limit),
    queryFn: () => unwrap(api.GET("/api/v1/audit", { params: { query: { limit } } })),
    placeholderData: keepPreviousData,
  });
}
