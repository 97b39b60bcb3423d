/** One incident: what fired where and since when, its value, and above all its cause. */
import { Link } from "react-router";
import { formatDateTime, formatMeasure, formatRelativeTime } from "../../../lib/format";
import type { Incident } from "../api/types";
import { IncidentStateTag, SeverityTag, SilencedTag } from "./AlertTags";

/** The cause (drop rule only) in words, and the config finding that fixes it when there is one. */
export function IncidentCause({ incident }: { incident: Pick<Incident, "cause" | "finding"> }) {
  const { cause, finding } = incident;
  if (!cause && !finding) return null;
  return (
    <section className="incident-cause" aria-label="cause">
      {cause ? (
        <>
          <p className="cause-title">{cause.title}</p>
          <p className="cause-detail">{cause.detail}</p>
        </>
      ) : null}
      {finding?.url ? (
        <p className="incident-links">
          <Link to={finding.url}>See the finding and its fix</Link>
        </p>
      ) : null}
    </section>
  );
}

interface IncidentCardProps {
  incident: Incident;
  now: number;
  /** Offer to silence the incident's rule on its host (operators and admins). */
  canSilence?: boolean;
}

/** When the incident began for the reader: firing since it fired, else since its condition first held. */
function since(incident: Incident): string {
  return incident.fired_at ?? incident.started_at;
}

/** The silence form, filled in for the incident's rule on its host. */
export function silenceLink(incident: Pick<Incident, "rule_id" | "hostname">): string {
  const query = new URLSearchParams({ rule: String(incident.rule_id), host: incident.hostname });
  return `/alerts/silences?${query.toString()}`;
}

export function IncidentCard({ incident, now, canSilence = false }: IncidentCardProps) {
  return (
    <article
      className={`incident-card incident-card-${incident.severity}`}
      aria-label={`${incident.rule_name} on ${incident.hostname}`}
    >
      <header className="incident-head">
        <SeverityTag severity={incident.severity} />
        <h3>
          <Link to={`/alerts/incidents/${incident.id}`}>{incident.rule_name}</Link>
        </h3>
        <span>
          on <Link to={`/hosts/${incident.host_id}`}>{incident.hostname}</Link>
        </span>
        <IncidentStateTag state={incident.state} />
        {incident.silenced_by !== null ? <SilencedTag silenceId={incident.silenced_by} /> : null}
        <span className="muted" title={formatDateTime(since(incident))}>
          since {formatRelativeTime(since(incident), now)}
        </span>
        <span className="incident-value" aria-label="value">
          {formatMeasure(incident.value, incident.unit)}
        </span>
      </header>
      {incident.summary ? <p className="incident-summary">{incident.summary}</p> : null}
      <IncidentCause incident={incident} />
      {canSilence && incident.silenced_by === null ? (
        <p className="incident-links">
          <Link to={silenceLink(incident)} aria-label={`Silence ${incident.rule_name} on ${incident.hostname}`}>
            Silence…
          </Link>
        </p>
      ) : null}
    </article>
  );
}
