/** Builders of alerting-API objects for tests; override only what a test is about. */
import type { Channel, Delivery, Incident, IncidentDetail, Rule, RulePreview, Signal, Silence } from "../api/types";

export function incident(overrides: Partial<Incident> = {}): Incident {
  return {
    id: 7,
    rule_id: 1,
    rule_key: "dropped-connections",
    rule_name: "Dropped connections",
    severity: "critical",
    host_id: 3,
    hostname: "edge-drops",
    labels: { env: "prod" },
    state: "firing",
    started_at: "2026-11-21T09:55:00Z",
    fired_at: "2026-11-21T09:56:00Z",
    resolved_at: null,
    value: 412,
    unit: "connections",
    summary: "412 connections dropped in 2 min",
    cause: {
      code: "worker_connections",
      title: "worker_connections exhausted",
      detail:
        "the error log reported 'worker_connections are not enough' 37 times; Active 31 of 32 (1 worker x 32)",
      evidence: { worker_connections_not_enough: 37, active_max: 31, capacity: 32 },
    },
    finding: { rule: "W-connections", finding_id: 12, url: "/hosts/3/config?finding=12" },
    silenced_by: null,
    last_notified_at: "2026-11-21T09:56:05Z",
    url: "/alerts/7",
    ...overrides,
  };
}

export function delivery(overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: 31,
    channel_id: 2,
    channel_name: "ops-webhook",
    kind: "webhook",
    event: "firing",
    rule_key: "dropped-connections",
    incident_ids: [7],
    status: "sent",
    created_at: "2026-11-21T09:56:01Z",
    attempts: [{ n: 1, at: "2026-11-21T09:56:02Z", ok: true, status_code: 200, error: null, duration_ms: 35 }],
    ...overrides,
  };
}

export function incidentDetail(overrides: Partial<IncidentDetail> = {}): IncidentDetail {
  return { ...incident(), deliveries: [delivery()], ...overrides };
}

export function rule(overrides: Partial<Rule> = {}): Rule {
  return {
    id: 1,
    key: "dropped-connections",
    name: "Dropped connections",
    description: "nginx dropped connections it had accepted",
    enabled: true,
    signal: "dropped_connections",
    op: ">",
    threshold: 0,
    clear_threshold: null,
    min_requests: null,
    window_s: 120,
    for_s: 60,
    keep_firing_s: 300,
    repeat_interval_s: null,
    severity: "critical",
    no_data: "ok",
    scope: {},
    channel_ids: [2],
    ...overrides,
  };
}

export function signal(overrides: Partial<Signal> = {}): Signal {
  return {
    name: "dropped_connections",
    title: "Dropped connections",
    unit: "connections",
    kind: "counter",
    default_op: ">",
    needs_requests: false,
    ...overrides,
  };
}

export const SIGNALS: Signal[] = [
  signal(),
  signal({
    name: "share_5xx",
    title: "Share of 5xx responses",
    unit: "ratio",
    kind: "ratio",
    default_op: ">",
    needs_requests: true,
  }),
  signal({ name: "cert_days_left", title: "Days until a certificate expires", unit: "days", kind: "gauge", default_op: "<" }),
];

export function preview(overrides: Partial<RulePreview> = {}): RulePreview {
  return {
    evaluated: 12,
    matching: 2,
    hosts: [
      { host_id: 3, hostname: "edge-drops", labels: {}, value: 412, matches: true, no_data: false },
      { host_id: 4, hostname: "edge-2", labels: {}, value: 5, matches: true, no_data: false },
      { host_id: 5, hostname: "edge-3", labels: {}, value: 0, matches: false, no_data: false },
      { host_id: 6, hostname: "edge-new", labels: {}, value: null, matches: false, no_data: true },
    ],
    ...overrides,
  };
}

export function channel(overrides: Partial<Channel> = {}): Channel {
  return {
    id: 2,
    name: "ops-webhook",
    kind: "webhook",
    enabled: true,
    settings: { url: "https://hooks.example.org/alerts" },
    secrets_set: ["bearer_token"],
    ...overrides,
  };
}

export function silence(overrides: Partial<Silence> = {}): Silence {
  return {
    id: 4,
    rule_id: null,
    rule_key: null,
    matchers: [{ label: "host", op: "=", value: "edge-drops" }],
    starts_at: "2026-11-21T10:00:00Z",
    ends_at: "2999-01-01T00:00:00Z",
    reason: "planned maintenance",
    created_by: "olga",
    created_at: "2026-11-21T10:00:00Z",
    active: true,
    ...overrides,
  };
}
