/** Active incidents (pending, firing, recovering, no data), newest first, each with its cause. */
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { useNow } from "../../../lib/use-now";
import { useActiveIncidents } from "../api/alerts";
import type { Incident } from "../api/types";
import { IncidentCard } from "./IncidentCard";

/** Newest first: by when the condition first held, then by id. */
export function newestFirst(incidents: readonly Incident[]): Incident[] {
  return [...incidents].sort((a, b) => Date.parse(b.started_at) - Date.parse(a.started_at) || b.id - a.id);
}

export function FiringList({ incidents, canSilence }: { incidents: readonly Incident[]; canSilence: boolean }) {
  const now = useNow();
  if (incidents.length === 0) {
    return (
      <EmptyState>
        <strong>Nothing is firing</strong>
        <p>Every rule holds on every host in its scope.</p>
      </EmptyState>
    );
  }
  return (
    <ul className="incident-list" aria-label="active incidents">
      {newestFirst(incidents).map((incident) => (
        <li key={incident.id}>
          <IncidentCard incident={incident} now={now} canSilence={canSilence} />
        </li>
      ))}
    </ul>
  );
}

export function FiringTab({ canSilence }: { canSilence: boolean }) {
  const incidents = useActiveIncidents();
  if (incidents.isPending) return <Loading what="Loading active alerts" />;
  if (incidents.isError) return <ErrorState error={incidents.error} title="Could not load the active alerts" />;
  return <FiringList incidents={incidents.data.items} canSilence={canSilence} />;
}
