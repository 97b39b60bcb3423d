/**
 * Alerts (/alerts, /alerts/history, /alerts/rules, /alerts/silences, /alerts/channels): what
 * fires now, what fired, the rules, the silences and (admins) the notification channels.
 */
import { NavLink } from "react-router";
import { hasRole } from "../../../lib/roles";
import { useMe } from "../../auth/api/auth";
import { useAlertSummary } from "../api/alerts";
import { ChannelsTab } from "./ChannelsTab";
import { FiringTab } from "./FiringTab";
import { HistoryTab } from "./HistoryTab";
import { RulesTab } from "./RulesTab";
import { SilencesTab } from "./SilencesTab";
import "../alerts.css";

export type AlertsTab = "firing" | "history" | "rules" | "silences" | "channels";

function AlertTabs({ isAdmin }: { isAdmin: boolean }) {
  return (
    <nav className="alert-tabs" aria-label="alert views">
      <NavLink to="/alerts" end>
        Firing
      </NavLink>
      <NavLink to="/alerts/history">History</NavLink>
      <NavLink to="/alerts/rules">Rules</NavLink>
      <NavLink to="/alerts/silences">Silences</NavLink>
      {isAdmin ? <NavLink to="/alerts/channels">Channels</NavLink> : null}
    </nav>
  );
}

function SummaryLine() {
  const summary = useAlertSummary();
  if (!summary.data) return null;
  const { firing, pending } = summary.data;
  return (
    <span className="muted" aria-label="alert summary">
      {firing} firing · {pending} pending
    </span>
  );
}

export default function AlertsPage({ tab }: { tab: AlertsTab }) {
  const me = useMe();
  const role = me.data?.role;
  return (
    <section aria-labelledby="alerts-title">
      <header className="page-header">
        <h1 id="alerts-title">Alerts</h1>
        <SummaryLine />
      </header>
      <AlertTabs isAdmin={hasRole(role, "admin")} />
      {tab === "firing" ? <FiringTab canSilence={hasRole(role, "operator")} /> : null}
      {tab === "history" ? <HistoryTab /> : null}
      {tab === "rules" ? <RulesTab isAdmin={hasRole(role, "admin")} /> : null}
      {tab === "silences" ? <SilencesTab canWrite={hasRole(role, "operator")} /> : null}
      {tab === "channels" ? <ChannelsTab /> : null}
    </section>
  );
}
