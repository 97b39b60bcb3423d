/** The config score (0–100), per-category scores and finding counts of the latest analysis. */
import { formatDateTime } from "../../../lib/format";
import type { ConfigAnalysis } from "../api/types";
import { scoreBand } from "../utils/score-band";

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

export function ScoreSummary({ analysis }: { analysis: ConfigAnalysis }) {
  // Worst categories first: that is where to look.
  const categories = Object.entries(analysis.categories).sort(([a, x], [b, y]) => x - y || a.localeCompare(b));
  return (
    <div className="score-summary">
      <div className={`score-big score-${scoreBand(analysis.score) ?? "none"}`} role="group" aria-label="config score">
        <span className="score-value">{analysis.score ?? "—"}</span>
        <span className="score-outof">/ 100</span>
      </div>
      <div className="score-meta">
        <p className="score-counts">
          <span aria-label="errors">{plural(analysis.counts.error, "error")}</span> ·{" "}
          <span aria-label="warnings">{plural(analysis.counts.warning, "warning")}</span> ·{" "}
          <span aria-label="infos">{plural(analysis.counts.info, "info")}</span>
          <span className="muted"> (muted findings not counted)</span>
        </p>
        <p className="muted">analysed {formatDateTime(analysis.analyzed_at)}</p>
        <ul className="category-scores" aria-label="category scores">
          {categories.map(([category, value]) => (
            <li key={category} className={`score-${scoreBand(value) ?? "none"}`}>
              {category} <strong>{value}</strong>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
