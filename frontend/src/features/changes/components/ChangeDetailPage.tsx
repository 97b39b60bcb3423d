/** One change (/changes/:id): its diff, who did what, the live apply steps, impact and actions. */
import { Link, useParams } from "react-router";
import { ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime } from "../../../lib/format";
import { hasRole } from "../../../lib/roles";
import { useMe } from "../../auth/api/auth";
import { useChange, useChanges } from "../api/changes";
import type { Change, ChangeDetail, ChangeEvent } from "../api/types";
import { reachedAgent } from "../utils/steps";
import { ApplySteps } from "./ApplySteps";
import { ChangeActions } from "./ChangeActions";
import { ChangeStatusBadge } from "./ChangeStatusBadge";
import { DiffView } from "./DiffView";
import { ImpactCard } from "./ImpactCard";
import { ScoreDelta } from "./ScoreDelta";
import "../changes.css";

// A rollback that did not go through leaves the change free to be rolled back again.
const FAILED_ROLLBACK: ReadonlySet<string> = new Set(["failed", "refused", "rejected", "superseded", "rolled_back"]);

function Who({ who, when }: { who: string | null; when: string | null }) {
  if (!who) return <span className="muted">—</span>;
  return (
    <>
      {who} <span className="muted">{formatDateTime(when)}</span>
    </>
  );
}

// What the backend writes when a person gives no comment: not worth quoting.
const DEFAULT_MESSAGES: ReadonlySet<string> = new Set(["proposed", "approved", "rejected", "rollback approved"]);

/** The trail: every transition and agent step, with who and the comment or message. */
function History({ events }: { events: readonly ChangeEvent[] }) {
  return (
    <section className="change-history" aria-label="history">
      <h2>History and comments</h2>
      <ol>
        {events.map((event, i) => (
          <li key={i}>
            <span className="muted">{formatDateTime(event.at)}</span> <strong>{event.actor}</strong>{" "}
            {event.step ? (
              <span>
                {event.step} {event.step_status ?? ""}
              </span>
            ) : (
              <ChangeStatusBadge status={event.status} />
            )}
            {event.message && !DEFAULT_MESSAGES.has(event.message) ? (
              <span className="history-message"> “{event.message}”</span>
            ) : null}
          </li>
        ))}
      </ol>
    </section>
  );
}

function Related({ change, rollbacks }: { change: ChangeDetail; rollbacks: readonly Change[] }) {
  return (
    <>
      {change.kind === "rollback" && change.reverts_change_id !== null ? (
        <p>
          Rolls back <Link to={`/changes/${change.reverts_change_id}`}>change {change.reverts_change_id}</Link>.
        </p>
      ) : null}
      {rollbacks.map((rollback) => (
        <p key={rollback.id} className="banner banner-info">
          Rolled back by <Link to={`/changes/${rollback.id}`}>change {rollback.id}</Link> (
          <ChangeStatusBadge status={rollback.status} />)
        </p>
      ))}
      {change.status === "superseded" && change.outcome_message ? (
        <p className="banner banner-warning">{change.outcome_message}</p>
      ) : null}
    </>
  );
}

function ChangeView({ change, canReview }: { change: ChangeDetail; canReview: boolean }) {
  const hostChanges = useChanges({ hostId: change.host_id, limit: 100 });
  const rollbacks = (hostChanges.data?.items ?? []).filter(
    (c) => c.kind === "rollback" && c.reverts_change_id === change.id,
  );
  const activeRollback = rollbacks.find((c) => !FAILED_ROLLBACK.has(c.status));
  const failed = change.status === "rolled_back" || change.status === "failed" || change.status === "refused";

  return (
    <section aria-labelledby="change-title" className="change-detail">
      <nav className="breadcrumb" aria-label="breadcrumb">
        <Link to="/changes">Changes</Link> / <Link to={`/hosts/${change.host_id}/changes`}>{change.hostname}</Link> /
        change {change.id}
      </nav>
      <header className="page-header">
        <h1 id="change-title">
          {change.kind === "rollback" ? "Rollback" : "Change"} {change.id}
        </h1>
        <ChangeStatusBadge status={change.status} />
        {change.rollout_id !== null ? (
          <Link to={`/rollouts/${change.rollout_id}`}>
            rollout {change.rollout_id}
            {change.wave !== null ? `, wave ${change.wave}` : ""}
          </Link>
        ) : null}
      </header>
      <p className="change-title-line">{change.title}</p>
      <dl className="facts">
        <div>
          <dt>host</dt>
          <dd>
            <Link to={`/hosts/${change.host_id}`}>{change.hostname}</Link>
          </dd>
        </div>
        <div>
          <dt>proposed</dt>
          <dd>
            <Who who={change.created_by} when={change.created_at} />
          </dd>
        </div>
        <div>
          <dt>approved</dt>
          <dd>
            <Who who={change.approved_by} when={change.approved_at} />
          </dd>
        </div>
        <div>
          <dt>sent</dt>
          <dd>{change.sent_at ? formatDateTime(change.sent_at) : <span className="muted">—</span>}</dd>
        </div>
        <div>
          <dt>finished</dt>
          <dd>{change.finished_at ? formatDateTime(change.finished_at) : <span className="muted">—</span>}</dd>
        </div>
        <div>
          <dt>rules</dt>
          <dd>{change.rules.join(", ") || "—"}</dd>
        </div>
      </dl>
      {change.comment ? <p className="change-comment">“{change.comment}”</p> : null}
      <Related change={change} rollbacks={rollbacks} />
      {failed && change.outcome_message ? (
        <div className="banner banner-error" role="alert">
          <strong>
            {change.status.replace("_", " ")}
            {change.failed_step ? ` at ${change.failed_step.replace(/_/g, " ")}` : ""}:
          </strong>{" "}
          {change.outcome_message}
        </div>
      ) : null}
      {canReview ? <ChangeActions change={change} rolledBackBy={activeRollback} /> : null}
      {reachedAgent(change.status, change.events) ? <ApplySteps events={change.events} status={change.status} /> : null}
      {change.status === "verified" ? (
        <ImpactCard change={change} />
      ) : (
        <ScoreDelta before={change.score_before} after={change.score_after} note="as the engine expects it" />
      )}
      <h2>Diff</h2>
      <DiffView diff={change.diff} />
      <History events={change.events} />
    </section>
  );
}

export default function ChangeDetailPage() {
  const { changeId: rawId } = useParams();
  const changeId = Number(rawId);
  const change = useChange(changeId);
  const me = useMe();
  if (!Number.isInteger(changeId) || changeId <= 0) {
    return <ErrorState error={new Error(`"${rawId ?? ""}" is not a change id`)} title="No such change" />;
  }
  if (change.isPending) return <Loading what="Loading the change" />;
  if (change.isError) return <ErrorState error={change.error} title="Could not load this change" />;
  return <ChangeView change={change.data} canReview={hasRole(me.data?.role, "operator")} />;
}
