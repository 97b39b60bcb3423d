/** Host health as a coloured badge whose tooltip gives the reason. */
import type { HostStatus } from "../../api/types";

const TEXT: Record<HostStatus, string> = { up: "up", stale: "stale", down: "down", new: "new" };

export function StatusBadge({ status, reason }: { status: HostStatus; reason?: string | null }) {
  return (
    <span className={`status status-${status}`} title={reason ?? undefined}>
      <span className="status-dot" aria-hidden="true" />
      {TEXT[status]}
    </span>
  );
}
