/** Fleet-wide changes (/changes): rollouts and every change, newest first. */
import { useState } from "react";
import { Link } from "react-router";
import type { ChangeStatus } from "../../../api/types";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { hasRole } from "../../../lib/roles";
import { useMe } from "../../auth/api/auth";
import { useChanges, useRollouts } from "../api/changes";
import { CHANGE_STATUSES } from "../api/types";
import { ChangeTable } from "./ChangeTable";
import { RolloutTable } from "./RolloutTable";
import "../changes.css";

const FLEET_CHANGES_LIMIT = 100;

function Rollouts() {
  const rollouts = useRollouts();
  if (rollouts.isPending) return <Loading what="Loading rollouts" />;
  if (rollouts.isError) return <ErrorState error={rollouts.error} title="Could not load the rollouts" />;
  if (rollouts.data.length === 0) {
    return <EmptyState>No rollout yet. Start one here or from a rule on the Top findings page.</EmptyState>;
  }
  return <RolloutTable rollouts={rollouts.data} />;
}

function Changes() {
  const [status, setStatus] = useState<ChangeStatus | "">("");
  const changes = useChanges({ status: status || undefined, limit: FLEET_CHANGES_LIMIT });
  return (
    <>
      <div className="toolbar">
        <label className="inline-label">
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value as ChangeStatus | "")}>
            <option value="">any</option>
            {CHANGE_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </select>
        </label>
      </div>
      {changes.isPending ? <Loading what="Loading changes" /> : null}
      {changes.isError ? <ErrorState error={changes.error} title="Could not load the changes" /> : null}
      {changes.data && changes.data.items.length === 0 ? (
        <EmptyState>
          {status ? `No ${status.replace("_", " ")} change.` : "No change yet."} Changes are made from a finding's
          recommended change on a host's Config tab, or by a rollout.
        </EmptyState>
      ) : null}
      {changes.data && changes.data.items.length > 0 ? (
        <>
          <ChangeTable changes={changes.data.items} label="changes" showHost />
          {changes.data.total > changes.data.items.length ? (
            <p className="muted">
              The newest {changes.data.items.length} of {changes.data.total} changes.
            </p>
          ) : null}
        </>
      ) : null}
    </>
  );
}

export default function ChangesPage() {
  const me = useMe();
  return (
    <section aria-labelledby="changes-title">
      <header className="page-header">
        <h1 id="changes-title">Changes</h1>
        <span className="muted">recommended diffs applied by the agents, and rollouts across the fleet</span>
      </header>
      <div className="section-head">
        <h2>Rollouts</h2>
        {hasRole(me.data?.role, "operator") ? (
          <Link to="/rollouts/new" className="button-link">
            New rollout
          </Link>
        ) : null}
      </div>
      <Rollouts />
      <h2>All changes</h2>
      <Changes />
    </section>
  );
}
