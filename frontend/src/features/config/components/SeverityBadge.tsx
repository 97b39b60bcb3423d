/** A small coloured label for a finding's severity. */
import type { Severity } from "../api/types";
import "../score.css";

export function SeverityBadge({ severity }: { severity: Severity }) {
  return <span className={`severity severity-${severity}`}>{severity}</span>;
}
