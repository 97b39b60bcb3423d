/** The filtered fleet at a glance: hosts by status, summed load, hosts dropping, findings. */
import { formatCount, formatRate } from "../../../lib/format";
import type { FleetSummary } from "../api/fleet";

export function FleetSummaryCards({ summary }: { summary: FleetSummary }) {
  const cards: [string, string, string][] = [
    ["hosts", formatCount(summary.hosts), "hosts"],
    ["up", formatCount(summary.by_status.up), "up"],
    ["down", formatCount(summary.by_status.down), "down"],
    ["stale", formatCount(summary.by_status.stale), "stale"],
    ["new", formatCount(summary.by_status.new), "new"],
    ["req", formatRate(summary.req_per_s), "req/s (not stale)"],
    ["drops", formatCount(summary.hosts_with_drops), "hosts dropping"],
    ["errors", formatCount(summary.findings.error), "errors"],
    ["warnings", formatCount(summary.findings.warning), "warnings"],
  ];
  return (
    <ul className="fleet-summary" aria-label="fleet summary">
      {cards.map(([key, figure, caption]) => (
        <li key={key} data-summary={key}>
          <span className="figure">{figure}</span>
          <span className="caption">{caption}</span>
        </li>
      ))}
    </ul>
  );
}
