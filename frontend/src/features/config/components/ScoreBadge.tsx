/** A config score coloured by its band (good ≥ 90, fair 70–89, poor < 70). */
import { MISSING } from "../../../lib/format";
import { scoreBand } from "../utils/score-band";
import "../score.css";

export function ScoreBadge({ score }: { score: number | null | undefined }) {
  const band = scoreBand(score);
  if (band === null) return <span className="muted">{MISSING}</span>;
  return (
    <span className={`score-badge score-${band}`} title={`config score: ${band}`}>
      {score}
    </span>
  );
}
