/** "Score 67 → 70 (+3)": a config score before and after a change. */

export function ScoreDelta({
  before,
  after,
  afterLabel,
  note,
}: {
  before: number | null;
  after: number | null;
  /** Said when there is no score after yet (e.g. "after re-analysis"). */
  afterLabel?: string;
  /** Said after the figures (e.g. "as the engine expects it"). */
  note?: string;
}) {
  if (before === null && after === null) return null;
  const delta = before !== null && after !== null ? after - before : null;
  return (
    <p className="score-delta" aria-label="score before and after">
      Config score <strong>{before ?? "—"}</strong> → <strong>{after ?? "—"}</strong>
      {delta !== null && delta !== 0 ? (
        <span className={delta > 0 ? "score-up" : "score-down"}>
          {" "}
          ({delta > 0 ? "+" : "−"}
          {Math.abs(delta)})
        </span>
      ) : null}
      {after === null && afterLabel ? <span className="muted"> ({afterLabel})</span> : null}
      {note ? <span className="muted"> {note}</span> : null}
    </p>
  );
}
