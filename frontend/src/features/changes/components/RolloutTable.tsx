/** Rollouts as a table: rule, hosts matched, progress, status and why one stopped. */
import { Link } from "react-router";
import { formatDateTime } from "../../../lib/format";
import type { Rollout } from "../api/types";
import { rolloutCounts } from "../utils/rollout";
import { ChangeStatusBadge } from "./ChangeStatusBadge";

export function labelText(labels: Record<string, string[]>): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "whole fleet";
  return entries.map(([key, values]) => `${key}=${values.join("|")}`).join(", ");
}

export function RolloutTable({ rollouts }: { rollouts: readonly Rollout[] }) {
  return (
    <div className="table-wrap">
      <table className="data-table" aria-label="rollouts">
        <thead>
          <tr>
            <th scope="col">Rollout</th>
            <th scope="col">Rule</th>
            <th scope="col">Hosts</th>
            <th scope="col">Progress</th>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {rollouts.map((rollout) => {
            const counts = rolloutCounts(rollout);
            return (
              <tr key={rollout.id}>
                <td>
                  <Link to={`/rollouts/${rollout.id}`}>#{rollout.id}</Link>
                </td>
                <td className="rule-id">{rollout.rule}</td>
                <td>{labelText(rollout.labels)}</td>
                <td className="nowrap">
                  {counts.verified} of {counts.planned} applied
                  {counts.skipped ? <span className="muted"> · {counts.skipped} skipped</span> : null}
                </td>
                <td>
                  <ChangeStatusBadge status={rollout.status} />
                  {rollout.stop_reason ? <div className="stop-reason">{rollout.stop_reason}</div> : null}
                </td>
                <td className="nowrap">
                  {rollout.created_by} <span className="muted">{formatDateTime(rollout.created_at)}</span>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
