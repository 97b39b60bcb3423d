/** Query-key factories: one place that knows how server state is cached. */
import type { ChangeStatus, TimeRange } from "../api/types";

/** Which changes a list shows; absent fields do not filter. */
export interface ChangeFilter {
  hostId?: number;
  rolloutId?: number;
  status?: ChangeStatus;
  limit?: number;
}

/** What a fleet page shows besides its label filter (the server sorts, filters and pages). */
export interface FleetListPage {
  sort?: string;
  order?: "asc" | "desc";
  limit?: number;
  offset?: number;
  q?: string;
  statuses?: readonly string[];
}

/** The filters of the fleet summary besides labels. */
export interface FleetSummaryFilter {
  q?: string;
  statuses?: readonly string[];
}

export const queryKeys = {
  me: () => ["auth", "me"] as const,
  fleet: {
    all: () => ["fleet"] as const,
    lists: () => ["fleet", "list"] as const,
    /**
     * One page of the fleet: its label filter plus sort, page and the other filters. Label order
     * does not change the result, so it does not change the key either.
     */
    list: (labels: readonly string[], page: FleetListPage = {}) =>
      ["fleet", "list", { labels: [...labels].sort(), ...page }] as const,
    /** Counts by status, load and findings of the hosts a filter matches. */
    summary: (labels: readonly string[], filter: FleetSummaryFilter = {}) =>
      ["fleet", "summary", { labels: [...labels].sort(), ...filter }] as const,
    labels: () => ["fleet", "labels"] as const,
  },
  hosts: {
    all: () => ["hosts"] as const,
    detail: (hostId: number) => ["hosts", hostId] as const,
    series: (hostId: number, range: TimeRange) => ["hosts", hostId, "series", range] as const,
    /** Every access-log view of a host (each range and site): what a new sample makes stale. */
    accessLogs: (hostId: number) => ["hosts", hostId, "access-log"] as const,
    /** `site` null: all the host's sites together. */
    accessLog: (hostId: number, range: TimeRange, site: string | null) =>
      ["hosts", hostId, "access-log", range, { site }] as const,
  },
  users: {
    all: () => ["users"] as const,
  },
  enrollmentTokens: {
    all: () => ["enrollment-tokens"] as const,
  },
  /** Stored changes; a live `change` event invalidates all of them. */
  changes: {
    all: () => ["changes"] as const,
    lists: () => ["changes", "list"] as const,
    list: (filter: ChangeFilter) => ["changes", "list", filter] as const,
    detail: (changeId: number) => ["changes", "detail", changeId] as const,
  },
  /** Engine previews: not under "changes", so live events do not re-run the engine. */
  changePreview: (hostId: number, snapshotId: number, keys: readonly string[], overrides: Record<string, string[]>) =>
    ["change-preview", hostId, snapshotId, { keys: [...keys].sort(), overrides }] as const,
  rollouts: {
    all: () => ["rollouts"] as const,
    list: () => ["rollouts", "list"] as const,
    detail: (rolloutId: number) => ["rollouts", "detail", rolloutId] as const,
  },
  audit: {
    all: () => ["audit"] as const,
    list: (limit: number) => ["audit", { limit }] as const,
  },
  /** Alerting: a saved rule, silence or channel refreshes what is under its prefix. */
  alerts: {
    all: () => ["alerts"] as const,
    summary: () => ["alerts", "summary"] as const,
    incidents: () => ["alerts", "incidents"] as const,
    incidentList: (state: "active" | "resolved" | "all") => ["alerts", "incidents", "list", { state }] as const,
    incident: (incidentId: number) => ["alerts", "incidents", "detail", incidentId] as const,
    /** A host's alert periods over a chart's range, for the marks on its charts. */
    periods: (hostId: number, range: TimeRange) => ["alerts", "periods", hostId, range] as const,
    rules: () => ["alerts", "rules"] as const,
    rule: (ruleId: number) => ["alerts", "rules", ruleId] as const,
    signals: () => ["alerts", "signals"] as const,
    silences: () => ["alerts", "silences"] as const,
    silenceList: (includeExpired: boolean) => ["alerts", "silences", { includeExpired }] as const,
    channels: () => ["alerts", "channels"] as const,
    channelDeliveries: (channelId: number) => ["alerts", "channels", channelId, "deliveries"] as const,
  },
  /** Rule previews: not under "alerts", so saving a rule does not re-run an open preview. */
  alertRulePreview: (body: object) => ["alert-rule-preview", body] as const,
  metricsToken: () => ["metrics-token"] as const,
};
