/** Small coloured tags of alerting: severity, incident state, delivery status, "silenced". */
import type { DeliveryStatus, IncidentState, Severity } from "../api/types";
import "../alerts.css";

export function SeverityTag({ severity }: { severity: Severity }) {
  return <span className={`alert-severity alert-severity-${severity}`}>{severity}</span>;
}

const STATE_TEXT: Record<IncidentState, string> = {
  pending: "pending",
  firing: "firing",
  recovering: "recovering",
  nodata: "no data",
  error: "error",
  resolved: "resolved",
};

export function IncidentStateTag({ state }: { state: IncidentState }) {
  return <span className={`incident-state incident-state-${state}`}>{STATE_TEXT[state] ?? state}</span>;
}

export function SilencedTag({ silenceId }: { silenceId: number }) {
  return (
    <span className="silenced-tag" title={`Silence ${silenceId} keeps it from notifying`}>
      silenced
    </span>
  );
}

export function DeliveryStatusTag({ status }: { status: DeliveryStatus }) {
  return <span className={`delivery-status delivery-status-${status}`}>{status}</span>;
}
