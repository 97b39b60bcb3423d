/** Shapes of the config-analysis API, named from the generated OpenAPI schema. */
import type { components } from "../../../api/schema";

type Schemas = components["schemas"];

export type Severity = Schemas["FindingRead"]["severity"];
export type SeverityCounts = Schemas["FindingCounts"];
export type Finding = Schemas["FindingRead"];
export type ConfigFile = Schemas["ConfigFileRead"];
export type ConfigSnapshot = Schemas["SnapshotRead"];
export type ConfigAnalysis = Schemas["AnalysisRead"];
export type HostConfig = Schemas["HostConfigRead"];
export type ScorePoint = Schemas["ScorePoint"];
export type Ack = Schemas["AckRead"];
export type TopFinding = Schemas["TopFinding"];

/** The POST /acks body with every field spelled out (null: fleet-wide, every finding, no expiry). */
export type AckCreate = Required<Schemas["AckCreate"]>;

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

export const SCORE_RANGES = ["24h", "7d", "30d"] as const;
export type ScoreRange = (typeof SCORE_RANGES)[number];
