/** A new rollout (/rollouts/new?rule=) and one rollout's progress by wave (/rollouts/:id). */
import { Link, useParams, useSearchParams } from "react-router";
import { ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime } from "../../../lib/format";
import { useRollout } from "../api/changes";
import type { Rollout } from "../api/types";
import { rolloutCounts, rolloutWaves } from "../utils/rollout";
import { ChangeStatusBadge } from "./ChangeStatusBadge";
import { RolloutForm } from "./RolloutForm";
import { labelText } from "./RolloutTable";
import "../changes.css";

export function NewRolloutPage() {
  const [params] = useSearchParams();
  return (
    <section aria-labelledby="new-rollout-title">
      <nav className="breadcrumb" aria-label="breadcrumb">
        <Link to="/changes">Changes</Link> / new rollout
      </nav>
      <header className="page-header">
        <h1 id="new-rollout-title">New rollout</h1>
        <span className="muted">one rule's fix on many hosts: a canary first, then batches</span>
      </header>
      <RolloutForm initialRule={params.get("rule") ?? ""} />
    </section>
  );
}

function gateText(gate: Record<string, unknown> | null): string {
  if (!gate) return "none";
  const parts: string[] = [];
  if (gate.drops !== false) parts.push("dropped connections");
  const rises = gate.max_rise_pct;
  if (rises && typeof rises === "object") {
    for (const [name, pct] of Object.entries(rises as Record<string, unknown>)) {
      parts.push(`${name} rising > ${String(pct)}%`);
    }
  }
  const checks = typeof gate.checks === "number" ? gate.checks : 3;
  const watch = typeof gate.watch_s === "number" ? gate.watch_s : 300;
  return `${parts.join(", ") || "no figure"}; ${checks} failed checks in a row within ${watch} s roll a host back`;
}

function RolloutView({ rollout }: { rollout: Rollout }) {
  const waves = rolloutWaves(rollout.hosts);
  const skipped = rollout.hosts.filter((h) => h.wave === null);
  const counts = rolloutCounts(rollout);
  return (
    <section aria-labelledby="rollout-title">
      <nav className="breadcrumb" aria-label="breadcrumb">
        <Link to="/changes">Changes</Link> / rollout {rollout.id}
      </nav>
      <header className="page-header">
        <h1 id="rollout-title">
          Rollout {rollout.id}: {rollout.rule}
        </h1>
        <ChangeStatusBadge status={rollout.status} />
      </header>
      {rollout.stop_reason ? (
        <div className="banner banner-error" role="alert">
          <strong>Stopped:</strong> {rollout.stop_reason}
        </div>
      ) : null}
      <dl className="facts">
        <div>
          <dt>hosts</dt>
          <dd>{labelText(rollout.labels)}</dd>
        </div>
        <div>
          <dt>progress</dt>
          <dd>
            {counts.verified} of {counts.planned} applied
          </dd>
        </div>
        <div>
          <dt>waves</dt>
          <dd>
            {rollout.canary} canary, then batches of {rollout.batch_size}
          </dd>
        </div>
        <div>
          <dt>auto rollback</dt>
          <dd>{gateText(rollout.auto_rollback)}</dd>
        </div>
        <div>
          <dt>started</dt>
          <dd>
            {rollout.created_by} <span className="muted">{formatDateTime(rollout.created_at)}</span>
          </dd>
        </div>
        <div>
          <dt>finished</dt>
          <dd>{rollout.finished_at ? formatDateTime(rollout.finished_at) : <span className="muted">—</span>}</dd>
        </div>
      </dl>
      {rollout.comment ? <p className="change-comment">“{rollout.comment}”</p> : null}
      {waves.map((wave) => (
        <section key={wave.wave} className="rollout-wave" aria-label={wave.name}>
          <h2>{wave.name === "canary" ? "Canary" : `Wave ${wave.wave}`}</h2>
          <ul className="wave-hosts">
            {wave.hosts.map((host) => (
              <li key={host.host_id}>
                <Link to={`/hosts/${host.host_id}/changes`}>{host.hostname}</Link>{" "}
                <ChangeStatusBadge status={host.status} />{" "}
                {host.change_id !== null ? (
                  <Link to={`/changes/${host.change_id}`}>change {host.change_id}</Link>
                ) : null}
                {host.reason ? <span className="muted"> {host.reason}</span> : null}
              </li>
            ))}
          </ul>
        </section>
      ))}
      {skipped.length > 0 ? (
        <section className="rollout-wave" aria-label="skipped hosts">
          <h2>Skipped</h2>
          <ul className="wave-hosts">
            {skipped.map((host) => (
              <li key={host.host_id}>
                <Link to={`/hosts/${host.host_id}`}>{host.hostname}</Link>: {host.reason ?? "no change for it"}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </section>
  );
}

export function RolloutDetailPage() {
  const { rolloutId: rawId } = useParams();
  const rolloutId = Number(rawId);
  const rollout = useRollout(rolloutId);
  if (!Number.isInteger(rolloutId) || rolloutId <= 0) {
    return <ErrorState error={new Error(`"${rawId ?? ""}" is not a rollout id`)} title="No such rollout" />;
  }
  if (rollout.isPending) return <Loading what="Loading the rollout" />;
  if (rollout.isError) return <ErrorState error={rollout.error} title="Could not load this rollout" />;
  return <RolloutView rollout={rollout.data} />;
}
