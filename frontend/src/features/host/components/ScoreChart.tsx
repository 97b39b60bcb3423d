/** The config score over time, one step per analysis. */
import { useMemo } from "react";
import { type ChartSeries, TimeSeriesChart } from "../../../components/charts";
import type { ScorePoint, ScoreRange } from "../../config/api/types";
import { scoreWindow, toScoreRows } from "../utils/score-rows";

const SCORE: ChartSeries[] = [{ key: "score", label: "Config score (0–100)", color: "#1e8e3e", kind: "step" }];

interface ScoreChartProps {
  points: readonly ScorePoint[];
  range: ScoreRange;
  now: number;
}

export default function ScoreChart({ points, range, now }: ScoreChartProps) {
  const rows = useMemo(() => toScoreRows(points, now), [points, now]);
  const domain = useMemo(() => scoreWindow(range, now), [range, now]);
  return (
    <TimeSeriesChart
      title="Config score over time"
      rows={rows}
      series={SCORE}
      domain={domain}
      formatValue={(v) => String(Math.round(v))}
      yMax={100}
      height={160}
    />
  );
}
