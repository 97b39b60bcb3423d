/** Resolved incidents, newest first, with when they started and ended; older ones on request. */
import { Link } from "react-router";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime, formatMeasure, formatSpan } from "../../../lib/format";
import { useResolvedIncidents } from "../api/alerts";
import { SeverityTag } from "./AlertTags";

export function HistoryTab() {
  const history = useResolvedIncidents();
  if (history.isPending) return <Loading what="Loading resolved alerts" />;
  // A failed "Load older" keeps the pages already shown; only a failed first page replaces them.
  if (history.isError && !history.isFetchNextPageError) {
    return <ErrorState error={history.error} title="Could not load the alert history" />;
  }
  const incidents = history.data.pages.flatMap((page) => page.items);
  if (incidents.length === 0) return <EmptyState>No alert has resolved yet.</EmptyState>;
  return (
    <>
      <div className="table-wrap">
        <table className="data-table" aria-label="resolved incidents">
          <thead>
            <tr>
              <th scope="col">Incident</th>
              <th scope="col">Severity</th>
              <th scope="col">Rule</th>
              <th scope="col">Host</th>
              <th scope="col">Started</th>
              <th scope="col">Resolved</th>
              <th scope="col" className="num">
                Duration
              </th>
              <th scope="col" className="num">
                Last value
              </th>
              <th scope="col">Cause</th>
            </tr>
          </thead>
          <tbody>
            {incidents.map((incident) => (
              <tr key={incident.id}>
                <td>
                  <Link to={`/alerts/incidents/${incident.id}`}>#{incident.id}</Link>
                </td>
                <td>
                  <SeverityTag severity={incident.severity} />
                </td>
                <td>{incident.rule_name}</td>
                <td>
                  <Link to={`/hosts/${incident.host_id}`}>{incident.hostname}</Link>
                </td>
                <td className="nowrap">{formatDateTime(incident.started_at)}</td>
                <td className="nowrap">{formatDateTime(incident.resolved_at)}</td>
                <td className="num">{formatSpan(incident.started_at, incident.resolved_at)}</td>
                <td className="num">{formatMeasure(incident.value, incident.unit)}</td>
                <td>{incident.cause?.title ?? <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {history.hasNextPage ? (
        <p>
          <button type="button" disabled={history.isFetchingNextPage} onClick={() => void history.fetchNextPage()}>
            {history.isFetchingNextPage ? "Loading…" : "Load older"}
          </button>
        </p>
      ) : null}
      {history.isFetchNextPageError ? (
        <ErrorState error={history.error} title="Could not load older alerts" />
      ) : null}
    </>
  );
}
