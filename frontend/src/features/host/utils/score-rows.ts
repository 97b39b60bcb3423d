/** Chart rows of a host's score history. */
import type { ChartRow } from "../../../components/charts";
import type { ScorePoint, ScoreRange } from "../../config/api/types";

const RANGE_MS: Record<ScoreRange, number> = { "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 };

/** The window a score range covers, ending now. */
export function scoreWindow(range: ScoreRange, now: number): readonly [number, number] {
  return [now - RANGE_MS[range], now] as const;
}

/**
 * One row per analysis, oldest first, plus the latest score repeated at `now`: a score holds
 * until the next analysis, so a single analysis still draws a line up to the present.
 */
export function toScoreRows(points: readonly ScorePoint[], now: number): ChartRow[] {
  const rows = points
    .map((p) => ({ t: Date.parse(p.ts), score: p.score }))
    .filter((row) => Number.isFinite(row.t))
    .sort((a, b) => a.t - b.t);
  const last = rows[rows.length - 1];
  if (last && last.t < now) rows.push({ t: now, score: last.score });
  return rows satisfies ChartRow[];
}
