/** Banners that explain why a host's connection figures are missing. */
import type { HostDetail } from "../../../api/types";

export const STUB_STATUS_HINT = "location = /nginx_status { stub_status; allow 127.0.0.1; deny all; }";

/** Every banner that applies: a stale host may also lack stub_status, and both matter. */
export function HostBanners({ host }: { host: HostDetail }) {
  return (
    <>
      <StatusBanner host={host} />
      {host.status !== "down" ? <StubStatusBanner host={host} /> : null}
    </>
  );
}

function StubStatusBanner({ host }: { host: HostDetail }) {
  if (host.stub_status_available !== false) return null;
  return (
    <div className="banner banner-warning" role="alert">
      <strong>stub_status is unavailable</strong>
      {host.stub_status_error ? <>: {host.stub_status_error}</> : null}. Connection and request charts stay empty
      until the agent can read it. If nginx has no status page yet, add <code>{STUB_STATUS_HINT}</code> to a server
      listening on 127.0.0.1 and reload nginx.
    </div>
  );
}

function StatusBanner({ host }: { host: HostDetail }) {
  if (host.status === "down") {
    return (
      <div className="banner banner-error" role="alert">
        <strong>nginx is down on this host.</strong> {host.status_reason ?? "The agent reports that nginx is not running."}
      </div>
    );
  }
  if (host.status === "stale") {
    return (
      <div className="banner banner-warning" role="status">
        <strong>No recent data.</strong> {host.status_reason ?? "The agent has not pushed for a while."}
      </div>
    );
  }
  if (host.status === "new") {
    return (
      <div className="banner banner-info" role="status">
        Enrolled; waiting for the agent&apos;s first push.
      </div>
    );
  }
  return null;
}
