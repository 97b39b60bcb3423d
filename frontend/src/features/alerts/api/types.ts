/**
 * Shapes of the alerting API (docs/alerts.md, section 5), written by hand until the backend's
 * OpenAPI document has them; then they become names for the generated schema, as in changes/.
 */
import type { Labels } from "../../../api/types";

export type Severity = "critical" | "warning" | "info";
export const SEVERITIES: readonly Severity[] = ["critical", "warning", "info"];

export type ComparisonOp = ">" | ">=" | "<" | "<=";
export const COMPARISON_OPS: readonly ComparisonOp[] = [">", ">=", "<", "<="];

/** What a host without data means for a rule. */
export type NoDataPolicy = "ok" | "keep" | "alerting" | "nodata";
export const NO_DATA_POLICIES: readonly NoDataPolicy[] = ["ok", "keep", "alerting", "nodata"];

export type IncidentState = "pending" | "firing" | "recovering" | "nodata" | "error" | "resolved";
/** The states `state=active` returns. */
export const ACTIVE_STATES: readonly IncidentState[] = ["pending", "firing", "recovering", "nodata"];

export interface AlertSummary {
  firing: number;
  pending: number;
  by_severity: Record<Severity, number>;
}

export type CauseCode = "worker_connections" | "fd_limit" | "listen_queue" | "unknown";

/** Why connections were dropped (the drop rule only). */
export interface IncidentCause {
  code: CauseCode;
  title: string;
  detail: string;
  evidence: Record<string, unknown>;
}

/** The config finding that explains an incident, and where the UI shows it with its fix. */
export interface IncidentFinding {
  rule: string;
  finding_id: number;
  url: string;
}

export interface Incident {
  id: number;
  rule_id: number;
  rule_key: string;
  rule_name: string;
  severity: Severity;
  host_id: number;
  hostname: string;
  labels: Labels;
  state: IncidentState;
  started_at: string;
  fired_at: string | null;
  resolved_at: string | null;
  value: number | null;
  unit: string | null;
  summary: string | null;
  cause: IncidentCause | null;
  finding: IncidentFinding | null;
  /** The silence that keeps this incident quiet, if any. */
  silenced_by: number | null;
  last_notified_at: string | null;
  url: string;
}

export interface IncidentPage {
  items: Incident[];
  next_before_id: number | null;
}

export type IncidentDetail = Incident & { deliveries: Delivery[] };

export type IncidentStateFilter = "active" | "resolved" | "all";

/** A stretch of time a rule fired on a host, for the chart marks. `end` null: still firing. */
export interface AlertPeriod {
  incident_id: number;
  rule_key: string;
  rule_name: string;
  severity: Severity;
  start: string;
  end: string | null;
}

export type DeliveryEvent = "firing" | "resolved" | "repeat" | "test";
export type DeliveryStatus = "pending" | "retrying" | "sent" | "failed";

export interface DeliveryAttempt {
  n: number;
  at: string;
  ok: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
}

export interface Delivery {
  id: number;
  channel_id: number;
  channel_name: string;
  kind: ChannelKind;
  event: DeliveryEvent;
  rule_key: string | null;
  incident_ids: number[];
  status: DeliveryStatus;
  created_at: string;
  attempts: DeliveryAttempt[];
}

/** The writable fields of a rule (docs/alerts.md, section 2). */
export interface RuleBody {
  key: string;
  name: string;
  description: string;
  enabled: boolean;
  signal: string;
  op: ComparisonOp;
  threshold: number;
  clear_threshold: number | null;
  min_requests: number | null;
  window_s: number;
  for_s: number;
  keep_firing_s: number;
  repeat_interval_s: number | null;
  severity: Severity;
  no_data: NoDataPolicy;
  scope: Labels;
  channel_ids: number[];
}

export interface Rule extends RuleBody {
  id: number;
  /** Why the rule could not be evaluated last time, if it could not. */
  last_error?: string | null;
  /** Incidents of this rule open now. */
  firing?: number;
}

export interface RulePreviewHost {
  host_id: number;
  hostname: string;
  labels: Labels;
  value: number | null;
  matches: boolean;
  no_data: boolean;
}

export interface RulePreview {
  evaluated: number;
  matching: number;
  hosts: RulePreviewHost[];
}

export interface Signal {
  name: string;
  title: string;
  unit: string;
  kind: string;
  default_op: ComparisonOp;
  needs_requests: boolean;
  /** Set when the figure always covers this span, whatever the rule's window. */
  fixed_window_s?: number | null;
}

export type MatcherOp = "=" | "!=";

export interface SilenceMatcher {
  label: string;
  op: MatcherOp;
  value: string;
}

export interface Silence {
  id: number;
  rule_id: number | null;
  rule_key: string | null;
  matchers: SilenceMatcher[];
  starts_at: string;
  ends_at: string;
  reason: string;
  created_by: string;
  created_at: string;
  active: boolean;
}

export interface SilenceCreate {
  rule_id: number | null;
  matchers: SilenceMatcher[];
  ends_at: string;
  reason: string;
}

export type ChannelKind = "webhook" | "slack" | "email";
export const CHANNEL_KINDS: readonly ChannelKind[] = ["webhook", "slack", "email"];

export type EmailSecurity = "starttls" | "tls" | "none";
export const EMAIL_SECURITIES: readonly EmailSecurity[] = ["starttls", "tls", "none"];

export interface WebhookSettings {
  url: string;
}
export interface EmailSettings {
  host: string;
  /** null: the usual port of the security mode (587, 465, 25). */
  port: number | null;
  security: EmailSecurity;
  /** null: no SMTP authentication. */
  username: string | null;
  from_addr: string;
  to_addrs: string[];
}

/** Settings as stored: their shape depends on `kind` (slack has none). */
export type ChannelSettings = Partial<WebhookSettings> & Partial<EmailSettings>;

/** Secret names per kind; their values are never returned, only whether they are set. */
export type SecretName = "bearer_token" | "webhook_url" | "password";

export interface Channel {
  id: number;
  name: string;
  kind: ChannelKind;
  enabled: boolean;
  settings: ChannelSettings;
  secrets_set: SecretName[];
}

/** A channel write: an omitted secret keeps its value, an empty string clears it. */
export interface ChannelBody {
  name: string;
  kind: ChannelKind;
  enabled: boolean;
  settings: ChannelSettings;
  secrets: Partial<Record<SecretName, string>>;
}
