/** Colour bands of a 0–100 config score. */

export type ScoreBand = "good" | "fair" | "poor";

/** ≥ 90 good, 70–89 fair, below 70 poor; no band without a score. */
export function scoreBand(score: number | null | undefined): ScoreBand | null {
  if (typeof score !== "number" || !Number.isFinite(score)) return null;
  if (score >= 90) return "good";
  if (score >= 70) return "fair";
  return "poor";
}
