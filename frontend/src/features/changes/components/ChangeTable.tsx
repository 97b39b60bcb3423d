/** Changes as a table, newest first: what, where, status and who proposed and approved them. */
import { Link } from "react-router";
import { formatDateTime } from "../../../lib/format";
import type { Change } from "../api/types";
import { IN_FLIGHT } from "../api/types";
import { ChangeStatusBadge } from "./ChangeStatusBadge";

interface ChangeTableProps {
  changes: readonly Change[];
  label: string;
  /** Show the host column (the fleet-wide list); a host's own tab leaves it out. */
  showHost?: boolean;
}

export function ChangeTable({ changes, label, showHost = false }: ChangeTableProps) {
  return (
    <div className="table-wrap">
      <table className="data-table change-table" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Change</th>
            {showHost ? <th scope="col">Host</th> : null}
            <th scope="col">What</th>
            <th scope="col">Status</th>
            <th scope="col">Proposed</th>
            <th scope="col">Approved</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((change) => (
            <tr key={change.id}>
              <td className="nowrap">
                <Link to={`/changes/${change.id}`}>#{change.id}</Link>
                {change.rollout_id !== null ? (
                  <>
                    {" "}
                    <Link to={`/rollouts/${change.rollout_id}`} className="muted" title="part of a rollout">
                      rollout {change.rollout_id}
                    </Link>
                  </>
                ) : null}
              </td>
              {showHost ? (
                <td>
                  <Link to={`/hosts/${change.host_id}/changes`}>{change.hostname}</Link>
                </td>
              ) : null}
              <td className="change-title">
                {change.kind === "rollback" ? <span className="kind-tag">rollback</span> : null} {change.title}
              </td>
              <td className="nowrap">
                <ChangeStatusBadge status={change.status} />
                {IN_FLIGHT.has(change.status) && change.step ? <span className="muted"> · {change.step}</span> : null}
              </td>
              <td className="nowrap">
                {change.created_by} <span className="muted">{formatDateTime(change.created_at)}</span>
              </td>
              <td className="nowrap">
                {change.approved_by ? (
                  <>
                    {change.approved_by} <span className="muted">{formatDateTime(change.approved_at)}</span>
                  </>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
