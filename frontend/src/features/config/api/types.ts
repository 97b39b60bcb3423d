/** Shapes of the config-analysis API (docs/http-api.md, "Config analysis"). */

export type Severity = "error" | "warning" | "info";

export interface SeverityCounts {
  error: number;
  warning: number;
  info: number;
}

/** The fix a rule proposes, as the engine describes it (app/analysis/findings.py `Fix`). */
export interface FindingFix {
  action: string;
  directive: string;
  args: string[];
  file: string;
  line: number;
  context: string;
  note?: string;
}

export interface Finding {
  id: number;
  key: string;
  rule: string;
  severity: Severity;
  category: string;
  file: string;
  line: number;
  message: string;
  evidence: Record<string, unknown>;
  /** Free-form on the wire; read it through `readFix`. */
  fix: Record<string, unknown> | null;
  doc_url: string;
  muted: boolean;
  ack_id: number | null;
}

export interface ConfigFile {
  path: string;
  text: string;
  line_count: number;
}

export interface ConfigSnapshot {
  id: number;
  hash: string;
  received_at: string;
}

export interface ConfigAnalysis {
  id: number;
  analyzed_at: string;
  status: "ok" | "failed";
  /** Null when the engine failed. */
  score: number | null;
  categories: Record<string, number>;
  counts: SeverityCounts;
  error: string | null;
  findings: Finding[];
}

export interface HostConfig {
  host_id: number;
  snapshot: ConfigSnapshot | null;
  files: ConfigFile[];
  analysis: ConfigAnalysis | null;
}

export interface ScorePoint {
  ts: string;
  score: number;
  errors: number;
  warnings: number;
  infos: number;
}

export const SCORE_RANGES = ["24h", "7d", "30d"] as const;
export type ScoreRange = (typeof SCORE_RANGES)[number];

export interface Ack {
  id: number;
  rule: string;
  host_id: number | null;
  finding_key: string | null;
  reason: string;
  created_by: string;
  created_at: string;
  expires_at: string | null;
}

export interface AckCreate {
  rule: string;
  host_id: number | null;
  finding_key: string | null;
  reason: string;
  expires_at: string | null;
}

export interface TopFinding {
  rule: string;
  severity: Severity;
  category: string;
  hosts: number;
  findings: number;
  example_message: string;
  doc_url: string;
}
