/** A small dot saying whether live updates are flowing. */
import { useLiveStatus } from "../api/live-events";

const TEXT = { off: "offline", connecting: "connecting", live: "live", reconnecting: "reconnecting" } as const;

export function LiveIndicator() {
  const status = useLiveStatus();
  return (
    <span className={`live live-${status}`} role="status" aria-label={`live updates: ${TEXT[status]}`}>
      <span className="live-dot" aria-hidden="true" />
      {TEXT[status]}
    </span>
  );
}
