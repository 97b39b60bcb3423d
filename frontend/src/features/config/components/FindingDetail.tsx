/** One finding in full: message, evidence, the fix, the docs link, and mute / unmute actions. */
import { useState } from "react";
import { formatDateTime } from "../../../lib/format";
import { useDeleteAck } from "../api/acks";
import type { Ack, Finding, FindingFix } from "../api/types";
import { isMachineFixable, readFix } from "../utils/fix";
import { describePlace } from "../utils/place";
import { AckForm } from "./AckForm";
import { SeverityBadge } from "./SeverityBadge";

interface FindingDetailProps {
  finding: Finding;
  hostId: number;
  ack: Ack | undefined;
  canAcknowledge: boolean;
  /** Open the recommended diff of this finding; absent when the host takes no changes. */
  onRecommend?: () => void;
}

function formatEvidence(value: unknown): string {
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

const FIX_VERBS: Record<string, string> = { set: "Set", add: "Add", replace: "Replace with", remove: "Remove" };

function FixText({ fix }: { fix: FindingFix }) {
  const statement = [fix.directive, ...fix.args].join(" ");
  return (
    <div className="finding-fix">
      <h4>Fix</h4>
      <p>
        {FIX_VERBS[fix.action] ?? fix.action} <code>{statement};</code> in <code>{fix.context}</code> (
        {baseName(fix.file)} line {fix.line})
      </p>
      {fix.note ? <p className="muted">{fix.note}</p> : null}
    </div>
  );
}

function MutedNote({ ack }: { ack: Ack | undefined }) {
  if (!ack) return <p className="muted-note">Muted.</p>;
  const scope = [
    ack.host_id === null ? "whole fleet" : "this host",
    ack.finding_key === null ? "every finding of the rule" : "this finding",
  ];
  return (
    <p className="muted-note">
      Muted ({scope.join(", ")}) by {ack.created_by}: “{ack.reason}”
      {ack.expires_at ? ` until ${formatDateTime(ack.expires_at)}` : ""}
    </p>
  );
}

export function FindingDetail({ finding, hostId, ack, canAcknowledge, onRecommend }: FindingDetailProps) {
  const [acknowledging, setAcknowledging] = useState(false);
  const unmute = useDeleteAck();
  const evidence = Object.entries(finding.evidence);
  const fix = readFix(finding.fix);
  const where = describePlace(finding.place);
  return (
    <article className={`finding-detail severity-border-${finding.severity}`} aria-label="selected finding">
      <header className="finding-detail-head">
        <SeverityBadge severity={finding.severity} />
        <h3>{finding.rule}</h3>
        <span className="muted">
          {baseName(finding.file)}:{finding.line}
        </span>
      </header>
      {where ? (
        <p className="finding-place" aria-label="place">
          in <code>{where}</code>
        </p>
      ) : null}
      <p className="finding-message">{finding.message}</p>
      {evidence.length ? (
        <dl className="evidence" aria-label="evidence">
          {evidence.map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>{formatEvidence(value)}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {fix && fix.action !== "none" ? <FixText fix={fix} /> : null}
      {onRecommend && isMachineFixable(finding.fix) ? (
        <p>
          <button type="button" className="primary" onClick={onRecommend}>
            Recommended change
          </button>
        </p>
      ) : null}
      {finding.doc_url ? (
        <p>
          <a href={finding.doc_url} target="_blank" rel="noreferrer noopener">
            nginx documentation
          </a>
        </p>
      ) : null}
      {finding.muted ? <MutedNote ack={ack} /> : null}
      {canAcknowledge && finding.muted && finding.ack_id !== null ? (
        <button
          type="button"
          disabled={unmute.isPending}
          onClick={() => finding.ack_id !== null && unmute.mutate(finding.ack_id)}
        >
          Unmute
        </button>
      ) : null}
      {unmute.error ? (
        <p className="form-error" role="alert">
          {unmute.error.message}
        </p>
      ) : null}
      {canAcknowledge && !finding.muted ? (
        acknowledging ? (
          <AckForm finding={finding} hostId={hostId} onDone={() => setAcknowledging(false)} />
        ) : (
          <button type="button" onClick={() => setAcknowledging(true)}>
            Acknowledge
          </button>
        )
      ) : null}
    </article>
  );
}
