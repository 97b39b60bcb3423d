/** Findings grouped by category, with severity toggles and a "show muted" switch. */
import type { CategoryGroup, FindingFilter } from "../utils/findings";
import { SEVERITIES } from "../utils/findings";
import type { Finding, Severity } from "../api/types";
import { describePlace } from "../utils/place";
import { SeverityBadge } from "./SeverityBadge";

/** Findings picked to be fixed together in one change. */
export interface FindingSelection {
  keys: ReadonlySet<string>;
  canSelect: (finding: Finding) => boolean;
  onToggle: (finding: Finding) => void;
}

interface FindingListProps {
  groups: readonly CategoryGroup[];
  totals: Record<Severity, number>;
  categoryScores: Record<string, number>;
  filter: FindingFilter;
  onFilterChange: (filter: FindingFilter) => void;
  selectedKey: string | undefined;
  onSelect: (finding: Finding) => void;
  /** Checkboxes for fixable findings; absent when the host takes no changes. */
  selection?: FindingSelection;
}

export function FindingList({
  groups,
  totals,
  categoryScores,
  filter,
  onFilterChange,
  selectedKey,
  onSelect,
  selection,
}: FindingListProps) {
  const toggle = (severity: Severity) => {
    const severities = new Set(filter.severities);
    if (severities.has(severity)) severities.delete(severity);
    else severities.add(severity);
    onFilterChange({ ...filter, severities });
  };
  return (
    <section className="finding-list" aria-label="findings">
      <div className="finding-filters">
        <div role="group" aria-label="severity filter" className="segmented">
          {SEVERITIES.map((severity) => (
            <button
              key={severity}
              type="button"
              aria-pressed={filter.severities.has(severity)}
              className={`severity-toggle severity-toggle-${severity}`}
              onClick={() => toggle(severity)}
            >
              {severity} ({totals[severity]})
            </button>
          ))}
        </div>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={filter.showMuted}
            onChange={(e) => onFilterChange({ ...filter, showMuted: e.target.checked })}
          />
          show muted
        </label>
      </div>
      {groups.length === 0 ? <p className="muted">No findings match these filters.</p> : null}
      {groups.map((group) => (
        <section key={group.category} className="finding-group" aria-label={`category ${group.category}`}>
          <h3>
            {group.category}
            {categoryScores[group.category] !== undefined ? (
              <span className="muted"> · score {categoryScores[group.category]}</span>
            ) : null}
          </h3>
          <ul>
            {group.findings.map((finding) => (
              <li key={finding.key} className="finding-item">
                {selection?.canSelect(finding) ? (
                  <input
                    type="checkbox"
                    className="finding-pick"
                    checked={selection.keys.has(finding.key)}
                    aria-label={`fix ${finding.rule} at line ${finding.line} together with others`}
                    onChange={() => selection.onToggle(finding)}
                  />
                ) : selection ? (
                  <span className="finding-pick" aria-hidden="true" />
                ) : null}
                <button
                  type="button"
                  className={`finding-row${finding.key === selectedKey ? " selected" : ""}${finding.muted ? " is-muted" : ""}`}
                  aria-current={finding.key === selectedKey ? "true" : undefined}
                  onClick={() => onSelect(finding)}
                  title={finding.place ? `in ${describePlace(finding.place)}` : undefined}
                >
                  <SeverityBadge severity={finding.severity} />
                  <span className="finding-rule">{finding.rule}</span>
                  {finding.muted ? <span className="muted-tag">muted</span> : null}
                  <span className="finding-summary">{finding.message}</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </section>
  );
}
