/** The host page's Changes tab: every change of the host, newest first. */
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { useChanges } from "../api/changes";
import { ChangeTable } from "./ChangeTable";
import "../changes.css";

const HOST_CHANGES_LIMIT = 100;

export default function HostChangesTab({ hostId, applyAllowed }: { hostId: number; applyAllowed: boolean }) {
  const changes = useChanges({ hostId, limit: HOST_CHANGES_LIMIT });
  return (
    <section className="host-changes" aria-label="changes of this host">
      {!applyAllowed ? (
        <div className="banner banner-info" role="status">
          <strong>Read-only host:</strong> the agent on this host does not allow apply, so no new change can be made
          for it.
        </div>
      ) : null}
      {changes.isPending ? <Loading what="Loading changes" /> : null}
      {changes.isError ? <ErrorState error={changes.error} title="Could not load the changes" /> : null}
      {changes.data && changes.data.items.length === 0 ? (
        <EmptyState>
          No change has been made for this host yet. Open a finding on the Config tab and its recommended change to
          make one.
        </EmptyState>
      ) : null}
      {changes.data && changes.data.items.length > 0 ? (
        <>
          <ChangeTable changes={changes.data.items} label="host changes" />
          {changes.data.total > changes.data.items.length ? (
            <p className="muted">
              The newest {changes.data.items.length} of {changes.data.total} changes.
            </p>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
