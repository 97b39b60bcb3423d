/** A change's or a rollout's status as a coloured badge whose tooltip says what it means. */
import "../changes.css";

const MEANING: Record<string, string> = {
  proposed: "waiting for an operator's approval",
  approved: "approved; the agent gets it with its next push",
  sent: "sent to the agent",
  applying: "the agent is applying it",
  verified: "applied and live",
  rolled_back: "a step failed after the write; the previous files were restored",
  failed: "the restore itself failed: someone must look at the host",
  refused: "the agent refused it; nothing was written",
  rejected: "rejected; never sent",
  superseded: "the host's config changed; made again from the new config",
  running: "waves are being applied",
  completed: "every wave was applied",
  stopped: "stopped at a failed, refused or regressed host",
  skipped: "no change for this host",
};

const TONE: Record<string, string> = {
  proposed: "pending",
  approved: "active",
  sent: "active",
  applying: "active",
  running: "active",
  verified: "good",
  completed: "good",
  rolled_back: "bad",
  failed: "bad",
  refused: "bad",
  stopped: "bad",
  rejected: "neutral",
  superseded: "neutral",
  skipped: "neutral",
};

export function ChangeStatusBadge({ status }: { status: string }) {
  return (
    <span className={`change-status change-status-${TONE[status] ?? "neutral"}`} title={MEANING[status]}>
      {status.replace(/_/g, " ")}
    </span>
  );
}
