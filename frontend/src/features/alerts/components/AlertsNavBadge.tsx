/** The count of firing alerts next to "Alerts" in the navigation, coloured by the worst severity. */
import { useAlertSummary } from "../api/alerts";
import type { AlertSummary } from "../api/types";
import "../alerts.css";

function worstSeverity(summary: AlertSummary): string {
  if ((summary.by_severity.critical ?? 0) > 0) return "critical";
  if ((summary.by_severity.warning ?? 0) > 0) return "warning";
  return "info";
}

export function AlertsNavBadge() {
  const summary = useAlertSummary();
  // Nothing firing, or the count unknown: no badge (the Alerts page says why if it cannot load).
  const firing = summary.data?.firing ?? 0;
  if (!summary.data || firing <= 0) return null;
  const severity = worstSeverity(summary.data);
  return (
    <span className={`nav-badge nav-badge-${severity}`} role="img" aria-label={`${firing} firing`}>
      {firing}
    </span>
  );
}
