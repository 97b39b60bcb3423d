/** Notifications sent for an incident or through a channel, each attempt with its outcome. */
import { Link } from "react-router";
import { formatDateTime, formatLatency } from "../../../lib/format";
import type { Delivery, DeliveryAttempt } from "../api/types";
import { DeliveryStatusTag } from "./AlertTags";

function Attempt({ attempt }: { attempt: DeliveryAttempt }) {
  const parts = [formatDateTime(attempt.at)];
  if (attempt.status_code !== null) parts.push(`HTTP ${attempt.status_code}`);
  if (attempt.duration_ms !== null) parts.push(formatLatency(attempt.duration_ms / 1000));
  return (
    <li>
      #{attempt.n} {parts.join(" · ")}
      {attempt.error ? (
        <>
          {" · "}
          <span className="attempt-error">{attempt.error}</span>
        </>
      ) : attempt.ok ? (
        " · ok"
      ) : null}
    </li>
  );
}

interface DeliveryTableProps {
  deliveries: readonly Delivery[];
  label: string;
  /** Name the incidents of each delivery (a channel's list); an incident's own list leaves them out. */
  showIncidents?: boolean;
}

export function DeliveryTable({ deliveries, label, showIncidents = false }: DeliveryTableProps) {
  return (
    <div className="table-wrap">
      <table className="data-table" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Event</th>
            <th scope="col">Status</th>
            <th scope="col">Queued</th>
            {showIncidents ? <th scope="col">Incidents</th> : null}
            <th scope="col">Attempts</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((delivery) => (
            <tr key={delivery.id}>
              <td>
                {delivery.channel_name} <span className="muted">{delivery.kind}</span>
              </td>
              <td>{delivery.event}</td>
              <td>
                <DeliveryStatusTag status={delivery.status} />
              </td>
              <td className="nowrap">{formatDateTime(delivery.created_at)}</td>
              {showIncidents ? (
                <td>
                  {delivery.incident_ids.length === 0 ? <span className="muted">—</span> : null}
                  {delivery.incident_ids.map((id, i) => (
                    <span key={id}>
                      {i > 0 ? ", " : null}
                      <Link to={`/alerts/incidents/${id}`}>#{id}</Link>
                    </span>
                  ))}
                </td>
              ) : null}
              <td>
                {delivery.attempts.length === 0 ? (
                  <span className="muted">not tried yet</span>
                ) : (
                  <ol className="attempts" aria-label={`attempts of delivery ${delivery.id}`}>
                    {delivery.attempts.map((attempt) => (
                      <Attempt key={attempt.n} attempt={attempt} />
                    ))}
                  </ol>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
