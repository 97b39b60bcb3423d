/** What an applied change did: equal windows before and after, each figure against its normal variation. */
import { formatDateTime } from "../../../lib/format";
import type { Change } from "../api/types";
import { formatChangePct, formatMetric, formatWindow, readImpact } from "../utils/impact";
import { ScoreDelta } from "./ScoreDelta";

export function ImpactCard({ change }: { change: Pick<Change, "impact" | "score_before" | "score_after"> }) {
  const impact = readImpact(change.impact);
  return (
    <section className="impact-card card" aria-label="impact">
      <h2>Impact</h2>
      {impact === null ? (
        <p className="muted" role="status">
          Not measured yet: the comparison of the figures before and after the apply starts within a minute.
        </p>
      ) : impact.status === "waiting" ? (
        <p role="status">
          Measuring: the {formatWindow(impact.window_s)} after the apply are compared with the{" "}
          {formatWindow(impact.window_s)} before it once they are over
          {impact.after[1] ? <> (at {formatDateTime(impact.after[1])})</> : null}.
        </p>
      ) : impact.status === "insufficient_data" ? (
        <p role="status">
          Not enough data to measure the impact: {impact.summary || "too few samples around the apply"}.
        </p>
      ) : (
        <>
          <p className="impact-summary" role="status">
            Measured over {formatWindow(impact.window_s)} before and after: {impact.summary}.
          </p>
          <table className="data-table impact-table" aria-label="impact figures">
            <thead>
              <tr>
                <th scope="col">Figure</th>
                <th scope="col" className="num">
                  Before
                </th>
                <th scope="col" className="num">
                  After
                </th>
                <th scope="col" className="num">
                  Change
                </th>
                <th scope="col">Beyond normal variation?</th>
              </tr>
            </thead>
            <tbody>
              {impact.metrics.map((metric) => (
                <tr
                  key={metric.name}
                  title={metric.statement}
                  className={metric.significant ? "significant" : undefined}
                >
                  <td>{metric.label}</td>
                  <td className="num">{formatMetric(metric, metric.before)}</td>
                  <td className="num">{formatMetric(metric, metric.after)}</td>
                  <td className="num">{formatChangePct(metric.change_pct)}</td>
                  <td>{metric.significant ? "yes, significant" : "no"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <ScoreDelta
        before={impact?.score_before ?? change.score_before}
        after={impact?.score_after ?? null}
        afterLabel={`after the re-analysis; the engine expected ${change.score_after ?? "—"}`}
      />
    </section>
  );
}
