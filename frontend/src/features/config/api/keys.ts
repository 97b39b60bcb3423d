/** Query keys of the config-analysis server state. */
import type { ScoreRange } from "./types";

export const analysisKeys = {
  all: () => ["analysis"] as const,
  config: (hostId: number) => ["analysis", "config", hostId] as const,
  scores: (hostId: number, range: ScoreRange) => ["analysis", "scores", hostId, range] as const,
  acks: () => ["analysis", "acks"] as const,
  topFindings: () => ["analysis", "top-findings"] as const,
};
