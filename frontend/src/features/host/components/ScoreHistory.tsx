/** The Metrics tab's config score chart, over the chosen range (at least a day: scores move slowly). */
import { Suspense, lazy } from "react";
import type { TimeRange } from "../../../api/types";
import { Loading } from "../../../components/ui/states";
import { useNow } from "../../../lib/use-now";
import { useHostScores } from "../../config/api/config";
import type { ScoreRange } from "../../config/api/types";

const ScoreChart = lazy(() => import("./ScoreChart"));

/** Scores are kept per analysis, not per sample: anything up to a day shows the last day. */
export function scoreRangeFor(range: TimeRange): ScoreRange {
  return range === "7d" ? "7d" : "24h";
}

export function ScoreHistory({ hostId, range }: { hostId: number; range: TimeRange }) {
  const scoreRange = scoreRangeFor(range);
  const scores = useHostScores(hostId, scoreRange);
  const now = useNow(60_000);
  if (scores.isPending) return <Loading what="Loading score history" />;
  // A secondary panel: its failure is stated in place, not raised as an alert over the page.
  if (scores.isError)
    return <p className="state state-error">Could not load the score history: {scores.error.message}</p>;
  return (
    <div className="score-history">
      <Suspense fallback={<Loading what="Loading chart" />}>
        <ScoreChart points={scores.data.points} range={scoreRange} now={now} />
      </Suspense>
    </div>
  );
}
