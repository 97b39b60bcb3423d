/** Label filter: the active key=value chips and a picker of values in use. */
import { useId, useState } from "react";
import { type LabelPair, formatLabelFilter } from "../../../lib/labels";

interface LabelFilterProps {
  available: Record<string, string[]> | undefined;
  selected: readonly LabelPair[];
  onToggle: (pair: LabelPair) => void;
  onClear: () => void;
}

export function LabelFilter({ available, selected, onToggle, onClear }: LabelFilterProps) {
  const selectId = useId();
  const [choice, setChoice] = useState("");
  const selectedTerms = new Set(selected.map(formatLabelFilter));
  const options = Object.entries(available ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([key, values]) => [...values].sort().map((value) => ({ key, value })))
    .filter((pair) => !selectedTerms.has(formatLabelFilter(pair)));

  return (
    <div className="label-filter">
      <label htmlFor={selectId}>Filter by label</label>
      <select
        id={selectId}
        value={choice}
        onChange={(e) => {
          const pair = options.find((p) => formatLabelFilter(p) === e.target.value);
          if (pair) onToggle(pair);
          setChoice("");
        }}
      >
        <option value="">{options.length ? "add a label…" : "no labels to add"}</option>
        {options.map((pair) => (
          <option key={formatLabelFilter(pair)} value={formatLabelFilter(pair)}>
            {pair.key}={pair.value}
          </option>
        ))}
      </select>
      {selected.length > 0 ? (
        <ul className="chips" aria-label="active label filters">
          {selected.map((pair) => (
            <li key={formatLabelFilter(pair)} className="chip chip-active">
              <span>
                {pair.key}={pair.value}
              </span>
              <button
                type="button"
                className="chip-remove"
                aria-label={`Remove filter ${pair.key}=${pair.value}`}
                onClick={() => onToggle(pair)}
              >
                ×
              </button>
            </li>
          ))}
          <li>
            <button type="button" className="link-button" onClick={onClear}>
              clear
            </button>
          </li>
        </ul>
      ) : null}
    </div>
  );
}
