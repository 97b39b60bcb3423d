/** Which rules fire on how many hosts, over each host's latest analysis. */
import { useQuery } from "@tanstack/react-query";
import { unwrap } from "../../../api/client";
import { useApi } from "../../../api/context";
import { analysisKeys } from "../../config/api/keys";
import type { TopFinding } from "../../config/api/types";

export function useTopFindings() {
  const api = useApi();
  return useQuery({
    queryKey: analysisKeys.topFindings(),
    queryFn: async (): Promise<TopFinding[]> => unwrap(api.GET("/api/v1/findings/top")),
    refetchInterval: 60_000,
  });
}
