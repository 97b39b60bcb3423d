/** Alerting (docs/alerts.md, section 5): incidents, rules and their preview, silences, channels. */
import {
  type QueryClient,
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
} from "@tanstack/react-query";
import { ApiError } from "../../../api/client";
import { useApi } from "../../../api/context";
import type { TimeRange } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";
import { request } from "./request";
import type {
  AlertPeriod,
  AlertSummary,
  Channel,
  ChannelBody,
  Delivery,
  IncidentDetail,
  IncidentPage,
  Rule,
  RuleBody,
  RulePreview,
  Signal,
  Silence,
  SilenceCreate,
} from "./types";

/** The nav badge's count: polled, and refetched when the window gets the focus back. */
export const SUMMARY_POLL_MS = 15_000;
const ACTIVE_POLL_MS = 15_000;
const HISTORY_PAGE = 50;
const DELIVERIES_LIMIT = 20;

const RANGE_MS: Record<TimeRange, number> = {
  "15m": 15 * 60_000,
  "1h": 3_600_000,
  "6h": 6 * 3_600_000,
  "24h": 24 * 3_600_000,
  "7d": 7 * 24 * 3_600_000,
};

/** Whether an error is the API refusing the user's role (403), which pages show as "not for you". */
export function isForbidden(error: unknown): boolean {
  return error instanceof ApiError && error.status === 403;
}

export function useAlertSummary() {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.summary(),
    queryFn: (): Promise<AlertSummary> => request(api, "GET", "/alerts/summary"),
    refetchInterval: SUMMARY_POLL_MS,
    // Back at the tab after a while: the count may be old, whatever its age says.
    refetchOnWindowFocus: "always",
  });
}

/** Active incidents (pending, firing, recovering, no data), polled. */
export function useActiveIncidents() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useQuery({
    queryKey: queryKeys.alerts.incidentList("active"),
    queryFn: async (): Promise<IncidentPage> => {
      const page = await request<IncidentPage>(api, "GET", "/alerts/incidents", {
        query: { state: "active", limit: 100 },
      });
      // The badge's count follows the list on screen rather than lag it by up to a poll.
      void queryClient.invalidateQueries({ queryKey: queryKeys.alerts.summary() });
      return page;
    },
    refetchInterval: ACTIVE_POLL_MS,
  });
}

/** Resolved incidents, newest first, a page at a time ("Load older" asks for the next). */
export function useResolvedIncidents() {
  const api = useApi();
  return useInfiniteQuery({
    queryKey: queryKeys.alerts.incidentList("resolved"),
    queryFn: ({ pageParam }): Promise<IncidentPage> =>
      request(api, "GET", "/alerts/incidents", {
        query: { state: "resolved", limit: HISTORY_PAGE, before_id: pageParam },
      }),
    initialPageParam: null as number | null,
    getNextPageParam: (last) => last.next_before_id,
  });
}

export function useIncident(incidentId: number) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.incident(incidentId),
    queryFn: (): Promise<IncidentDetail> => request(api, "GET", `/alerts/incidents/${incidentId}`),
    enabled: Number.isInteger(incidentId) && incidentId > 0,
    refetchInterval: (query) => (query.state.data?.resolved_at ? false : ACTIVE_POLL_MS),
  });
}

/** The times a host's rules fired within a chart's range (ending now), for the bands on its charts. */
export function useAlertPeriods(hostId: number, range: TimeRange) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.periods(hostId, range),
    queryFn: (): Promise<AlertPeriod[]> => {
      const to = Date.now();
      return request(api, "GET", `/hosts/${hostId}/alert-periods`, {
        query: { from: new Date(to - RANGE_MS[range]).toISOString(), to: new Date(to).toISOString() },
      });
    },
    enabled: Number.isInteger(hostId) && hostId > 0,
    refetchInterval: 30_000,
    placeholderData: keepPreviousData,
  });
}

export function useAlertRules() {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.rules(),
    queryFn: (): Promise<Rule[]> => request(api, "GET", "/alerts/rules"),
  });
}

export function useAlertRule(ruleId: number) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.rule(ruleId),
    queryFn: (): Promise<Rule> => request(api, "GET", `/alerts/rules/${ruleId}`),
    enabled: Number.isInteger(ruleId) && ruleId > 0,
    // The editor's draft is made from the rule once; a refetch under it would not show anyway.
    refetchOnWindowFocus: false,
  });
}

export function useAlertSignals() {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.signals(),
    queryFn: (): Promise<Signal[]> => request(api, "GET", "/alerts/signals"),
    staleTime: 10 * 60_000,
  });
}

/** Which hosts a rule as drafted would match now; `body` null (an invalid draft) asks nothing. */
export function useRulePreview(body: RuleBody | null) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alertRulePreview(body ?? {}),
    queryFn: (): Promise<RulePreview> => request(api, "POST", "/alerts/rules/preview", { body }),
    enabled: body !== null,
    placeholderData: keepPreviousData,
    staleTime: 15_000,
    refetchOnWindowFocus: false,
  });
}

function refreshRules(queryClient: QueryClient) {
  void queryClient.invalidateQueries({ queryKey: queryKeys.alerts.rules() });
  void queryClient.invalidateQueries({ queryKey: queryKeys.alerts.incidents() });
}

/** Create (no id) or replace a rule (admin). */
export function useSaveRule() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ ruleId, body }: { ruleId: number | null; body: RuleBody }): Promise<Rule> =>
      ruleId === null
        ? request(api, "POST", "/alerts/rules", { body })
        : request(api, "PUT", `/alerts/rules/${ruleId}`, { body }),
    onSuccess: (rule) => {
      queryClient.setQueryData(queryKeys.alerts.rule(rule.id), rule);
      refreshRules(queryClient);
    },
  });
}

export function useDeleteRule() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (ruleId: number): Promise<void> => request(api, "DELETE", `/alerts/rules/${ruleId}`),
    onSuccess: (_data, ruleId) => {
      queryClient.removeQueries({ queryKey: queryKeys.alerts.rule(ruleId) });
      refreshRules(queryClient);
    },
  });
}

export function useSilences(includeExpired: boolean) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.silenceList(includeExpired),
    // `active=false` lists ended silences too.
    queryFn: (): Promise<Silence[]> =>
      request(api, "GET", "/alerts/silences", { query: { active: !includeExpired } }),
    refetchInterval: 60_000,
  });
}

/** A silence changes what is marked silenced on incidents: both are refreshed. */
function refreshSilences(queryClient: QueryClient) {
  void queryClient.invalidateQueries({ queryKey: queryKeys.alerts.silences() });
  void queryClient.invalidateQueries({ queryKey: queryKeys.alerts.incidents() });
}

export function useCreateSilence() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: SilenceCreate): Promise<Silence> => request(api, "POST", "/alerts/silences", { body }),
    onSuccess: () => refreshSilences(queryClient),
  });
}

export function useExpireSilence() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (silenceId: number): Promise<void> => request(api, "DELETE", `/alerts/silences/${silenceId}`),
    onSuccess: () => refreshSilences(queryClient),
  });
}

/** Notification channels (admin); `enabled` false for the others, whom the API would refuse. */
export function useAlertChannels(enabled = true) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.channels(),
    queryFn: (): Promise<Channel[]> => request(api, "GET", "/alerts/channels"),
    enabled,
  });
}

export function useChannelDeliveries(channelId: number, enabled: boolean) {
  const api = useApi();
  return useQuery({
    queryKey: queryKeys.alerts.channelDeliveries(channelId),
    queryFn: (): Promise<Delivery[]> =>
      request(api, "GET", `/alerts/channels/${channelId}/deliveries`, { query: { limit: DELIVERIES_LIMIT } }),
    enabled,
    refetchInterval: enabled ? 15_000 : false,
  });
}

export function useSaveChannel() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ channelId, body }: { channelId: number | null; body: ChannelBody }): Promise<Channel> =>
      channelId === null
        ? request(api, "POST", "/alerts/channels", { body })
        : request(api, "PUT", `/alerts/channels/${channelId}`, { body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.alerts.channels() }),
  });
}

export function useDeleteChannel() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (channelId: number): Promise<void> => request(api, "DELETE", `/alerts/channels/${channelId}`),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.alerts.channels() });
      // Rules name their channels.
      void queryClient.invalidateQueries({ queryKey: queryKeys.alerts.rules() });
    },
  });
}

/** Send a test notification through a channel at once; the reply is its delivery with the outcome. */
export function useTestChannel(channelId: number) {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (): Promise<Delivery> => request(api, "POST", `/alerts/channels/${channelId}/test`),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.alerts.channelDeliveries(channelId) }),
  });
}
