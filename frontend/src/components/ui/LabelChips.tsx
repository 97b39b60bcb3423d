/** Labels shown as key=value chips, optionally removable or clickable. */
import type { Labels } from "../../api/types";
import { type LabelPair, labelEntries } from "../../lib/labels";

interface LabelChipsProps {
  labels: Labels | null | undefined;
  onRemove?: (pair: LabelPair) => void;
  onSelect?: (pair: LabelPair) => void;
  disabled?: boolean;
}

export function LabelChips({ labels, onRemove, onSelect, disabled }: LabelChipsProps) {
  const entries = labelEntries(labels);
  if (entries.length === 0) return <span className="muted">no labels</span>;
  return (
    <ul className="chips" aria-label="labels">
      {entries.map((pair) => {
        const text = `${pair.key}=${pair.value}`;
        return (
          <li key={pair.key} className="chip">
            {onSelect ? (
              <button type="button" className="chip-button" onClick={() => onSelect(pair)} title={`Filter by ${text}`}>
                {text}
              </button>
            ) : (
              <span>{text}</span>
            )}
            {onRemove ? (
              <button
                type="button"
                className="chip-remove"
                aria-label={`Remove label ${text}`}
                disabled={disabled}
                onClick={() => onRemove(pair)}
              >
                ×
              </button>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}
