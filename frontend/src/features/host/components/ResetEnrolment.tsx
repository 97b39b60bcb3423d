/** Admin action on a host page: revoke the agent's token and let it enrol again once. */
import type { HostDetail } from "../../../api/types";
import { ErrorState } from "../../../components/ui/states";
import { formatDateTime } from "../../../lib/format";
import { useResetEnrolment } from "../api/host";

export function ResetEnrolment({ host }: { host: HostDetail }) {
  const reset = useResetEnrolment(host.id);
  return (
    <section className="reset-enrolment" aria-labelledby="reset-enrolment-title">
      <h2 id="reset-enrolment-title">Agent enrolment</h2>
      {host.enrolment_reset_at && host.enrolment_reset_expires_at ? (
        <p role="status">
          Enrolment reset on {formatDateTime(host.enrolment_reset_at)}: the agent's old token no longer works. Run the
          agent's <code>enroll</code> command on the host before {formatDateTime(host.enrolment_reset_expires_at)}, with
          an enrolment token made after the reset.
        </p>
      ) : (
        <p>
          For an agent that lost its state file or was reinstalled: revokes the host's token at once and lets its agent
          enrol once more, for a limited time, with an enrolment token made after the reset.
        </p>
      )}
      <button
        type="button"
        className="small danger"
        disabled={reset.isPending}
        onClick={() => {
          if (
            window.confirm(
              `Reset the agent enrolment of ${host.hostname}? Its agent stops reporting until it enrols again.`,
            )
          ) {
            reset.mutate();
          }
        }}
      >
        Reset agent enrolment
      </button>
      {reset.isError ? <ErrorState error={reset.error} title="Could not reset the enrolment" /> : null}
    </section>
  );
}
