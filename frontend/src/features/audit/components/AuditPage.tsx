/** Audit (/audit): recent logins, user, token and host changes. */
import { useState } from "react";
import type { AuditEvent } from "../../../api/types";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime } from "../../../lib/format";
import { useAuditEvents } from "../api/audit";

const LIMITS = [100, 500, 1000];

function describeDetail(detail: AuditEvent["detail"]): string {
  if (detail === null || detail === undefined) return "";
  return typeof detail === "string" ? detail : JSON.stringify(detail);
}

export function AuditPage() {
  const [limit, setLimit] = useState(100);
  const events = useAuditEvents(limit);

  return (
    <section aria-labelledby="audit-title">
      <header className="page-header">
        <h1 id="audit-title">Audit log</h1>
        <label className="inline-label">
          Show
          <select value={limit} onChange={(e) => setLimit(Number(e.target.value))}>
            {LIMITS.map((n) => (
              <option key={n} value={n}>
                last {n}
              </option>
            ))}
          </select>
        </label>
      </header>
      {events.isPending ? (
        <Loading what="Loading the audit log" />
      ) : events.isError ? (
        <ErrorState error={events.error} title="Could not load the audit log" />
      ) : events.data.length === 0 ? (
        <EmptyState>Nothing recorded yet.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="data-table" aria-label="audit events">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {events.data.map((event) => (
                <tr key={event.id}>
                  <td className="nowrap">{formatDateTime(event.ts)}</td>
                  <td>{event.actor ?? "system"}</td>
                  <td>
                    <code>{event.action}</code>
                  </td>
                  <td>{event.target ?? ""}</td>
                  <td className="detail-cell">{describeDetail(event.detail)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
