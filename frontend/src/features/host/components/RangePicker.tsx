/** Time range buttons (15 min … 7 d). */
import { TIME_RANGES, type TimeRange } from "../../../api/types";

const LABELS: Record<TimeRange, string> = { "15m": "15 min", "1h": "1 h", "6h": "6 h", "24h": "24 h", "7d": "7 d" };

export function RangePicker({ value, onChange }: { value: TimeRange; onChange: (range: TimeRange) => void }) {
  return (
    <div className="range-picker" role="group" aria-label="time range">
      {TIME_RANGES.map((range) => (
        <button
          key={range}
          type="button"
          aria-pressed={range === value}
          className={range === value ? "selected" : undefined}
          onClick={() => onChange(range)}
        >
          {LABELS[range]}
        </button>
      ))}
    </div>
  );
}

/** The range named in the URL, or 1 h when it is absent or not one we offer. */
export function parseRange(value: string | null): TimeRange {
  return (TIME_RANGES as readonly string[]).includes(value ?? "") ? (value as TimeRange) : "1h";
}
