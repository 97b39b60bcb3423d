/** One incident (/alerts/incidents/:id): its facts, cause and every notification sent for it. */
import { Link, useParams } from "react-router";
import { LabelChips } from "../../../components/ui/LabelChips";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime, formatMeasure, formatRelativeTime, formatSpan } from "../../../lib/format";
import { hasRole } from "../../../lib/roles";
import { useNow } from "../../../lib/use-now";
import { useMe } from "../../auth/api/auth";
import { useIncident } from "../api/alerts";
import { IncidentStateTag, SeverityTag, SilencedTag } from "./AlertTags";
import { DeliveryTable } from "./DeliveryTable";
import { IncidentCause, silenceLink } from "./IncidentCard";
import "../alerts.css";

export default function IncidentDetailPage() {
  const { incidentId: rawId } = useParams();
  const incidentId = Number(rawId);
  const incident = useIncident(incidentId);
  const me = useMe();
  const now = useNow();

  if (!Number.isInteger(incidentId) || incidentId <= 0) {
    return <ErrorState error={new Error(`"${rawId ?? ""}" is not an incident id`)} title="No such incident" />;
  }
  if (incident.isPending) return <Loading what="Loading the incident" />;
  if (incident.isError) return <ErrorState error={incident.error} title="Could not load this incident" />;
  const detail = incident.data;
  const canSilence = hasRole(me.data?.role, "operator") && detail.resolved_at === null && detail.silenced_by === null;

  return (
    <section aria-labelledby="incident-title" className="incident-detail">
      <nav className="breadcrumb" aria-label="breadcrumb">
        <Link to="/alerts">Alerts</Link> / incident {detail.id}
      </nav>
      <header className="page-header">
        <SeverityTag severity={detail.severity} />
        <h1 id="incident-title">
          {detail.rule_name} on {detail.hostname}
        </h1>
        <IncidentStateTag state={detail.state} />
        {detail.silenced_by !== null ? <SilencedTag silenceId={detail.silenced_by} /> : null}
      </header>
      <dl className="facts">
        <div>
          <dt>host</dt>
          <dd>
            <Link to={`/hosts/${detail.host_id}`}>{detail.hostname}</Link>
          </dd>
        </div>
        <div>
          <dt>rule</dt>
          <dd>
            <Link to={`/alerts/rules/${detail.rule_id}`}>{detail.rule_key}</Link>
          </dd>
        </div>
        <div>
          <dt>value</dt>
          <dd>{formatMeasure(detail.value, detail.unit)}</dd>
        </div>
        <div>
          <dt>started</dt>
          <dd title={formatDateTime(detail.started_at)}>{formatRelativeTime(detail.started_at, now)}</dd>
        </div>
        <div>
          <dt>fired</dt>
          <dd>{detail.fired_at ? formatDateTime(detail.fired_at) : "not yet"}</dd>
        </div>
        <div>
          <dt>resolved</dt>
          <dd>{detail.resolved_at ? formatDateTime(detail.resolved_at) : "not yet"}</dd>
        </div>
        {detail.resolved_at ? (
          <div>
            <dt>duration</dt>
            <dd>{formatSpan(detail.started_at, detail.resolved_at)}</dd>
          </div>
        ) : null}
        <div>
          <dt>last notified</dt>
          <dd>{detail.last_notified_at ? formatDateTime(detail.last_notified_at) : "never"}</dd>
        </div>
        <div className="facts-labels">
          <dt>labels</dt>
          <dd>
            <LabelChips labels={detail.labels} />
          </dd>
        </div>
      </dl>
      {detail.summary ? <p className="incident-summary">{detail.summary}</p> : null}
      <IncidentCause incident={detail} />
      {canSilence ? (
        <p className="incident-links">
          <Link to={silenceLink(detail)}>Silence this rule on {detail.hostname}…</Link>
        </p>
      ) : null}
      <h2>Notifications</h2>
      {detail.deliveries.length === 0 ? (
        <EmptyState>
          No notification sent for this incident
          {detail.silenced_by !== null ? " (it is silenced)" : detail.fired_at ? "" : " (it has not fired)"}.
        </EmptyState>
      ) : (
        <DeliveryTable deliveries={detail.deliveries} label="deliveries" />
      )}
    </section>
  );
}
