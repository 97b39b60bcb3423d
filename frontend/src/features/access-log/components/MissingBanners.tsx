/** "Why is this empty": one banner per reason figures are missing, with what fixes it. */
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { RecommendedChange } from "../../changes/components/RecommendedChange";
import { useHostConfig } from "../../config/api/config";
import type { Finding } from "../../config/api/types";
import { SeverityBadge } from "../../config/components/SeverityBadge";
import type { MissingFigure } from "../api/types";
import { type MissingGroup, describeGroup, figuresLabel, findingFor, severityOf } from "../utils/missing";

interface FixProps {
  hostId: number;
  /** Operators and admins may propose a change (on a host whose agent allows apply). */
  canPropose: boolean;
  applyAllowed: boolean;
}

const READ_ONLY_NOTE =
  "The agent on this host does not allow apply: make this change by hand, " +
  "or set allow_apply = true in its agent config.";

/** The Config tab with the finding open, keeping the page's range (and site) for the way back. */
function useConfigLink(hostId: number): (finding?: Finding) => string {
  const [params] = useSearchParams();
  return (finding) => {
    const search = new URLSearchParams(params);
    if (finding) search.set("finding", finding.key);
    const query = search.toString();
    return `/hosts/${hostId}/config${query ? `?${query}` : ""}`;
  };
}

/** The finding that adds the missing variable to the format, and its recommended diff on demand. */
function FindingFix({ reason, hostId, canPropose, applyAllowed }: { reason: MissingFigure } & FixProps) {
  const config = useHostConfig(hostId);
  const configLink = useConfigLink(hostId);
  const [open, setOpen] = useState(false);
  if (!reason.rule) return null;
  if (!reason.finding_key) {
    return (
      <p className="muted">
        The config analysis has no {reason.rule} finding on this host
        {reason.rule === "C-observable" ? ": it finds no cache whose use goes unlogged" : ""}.
      </p>
    );
  }
  const analysis = config.data?.analysis?.status === "ok" ? config.data.analysis : null;
  const snapshot = config.data?.snapshot ?? null;
  const finding = analysis ? findingFor(reason, analysis.findings) : undefined;
  if (!finding) {
    return (
      <p>
        Finding <strong>{reason.rule}</strong> of the config analysis adds it
        {config.isPending ? "" : " (not in the latest analysis any more)"}: see the{" "}
        <Link to={configLink()}>Config tab</Link>.
      </p>
    );
  }
  return (
    <div className="missing-finding" role="group" aria-label={`finding ${finding.rule}`}>
      <p>
        <SeverityBadge severity={finding.severity} /> <strong>{finding.rule}</strong>: {finding.message}
        {finding.muted ? <span className="muted"> (muted)</span> : null}
      </p>
      <p className="missing-actions">
        {snapshot ? (
          <button type="button" className="small" aria-expanded={open} onClick={() => setOpen((v) => !v)}>
            {open ? "Hide the recommended change" : "Show the recommended change"}
          </button>
        ) : null}{" "}
        <Link to={configLink(finding)}>Open {finding.rule} in the Config tab</Link>
      </p>
      {open && snapshot ? (
        <RecommendedChange
          hostId={hostId}
          snapshotId={snapshot.id}
          findings={[finding]}
          canPropose={canPropose && applyAllowed}
          viewOnlyNote={applyAllowed ? undefined : READ_ONLY_NOTE}
          onClose={() => setOpen(false)}
        />
      ) : null}
    </div>
  );
}

function Details({ group, ...fix }: { group: MissingGroup } & FixProps) {
  const { reason } = group;
  const configLink = useConfigLink(fix.hostId);
  switch (reason.reason) {
    case "format_lacks_field":
      return <FindingFix reason={reason} {...fix} />;
    case "file_unreadable":
      return (
        <p className="muted">
          The agent reads the files nginx writes as its own user: give that user read access to the file and its
          directories (e.g. the <code>adm</code> group on Debian), or point the <code>access_log</code> at a file it can
          read.
        </p>
      );
    case "lines_do_not_match":
      return (
        <div className="missing-sample">
          {reason.sample_line ? (
            <>
              <p>
                A line that does not match (redacted), matched against the format{" "}
                <code>{reason.sample_format ?? "?"}</code>:
              </p>
              <pre className="missing-sample-line" aria-label="unmatched line">
                {reason.sample_line}
              </pre>
            </>
          ) : (
            <p className="muted">The agent sent no sample line.</p>
          )}
          <p className="muted">
            Lines written before the log_format changed, or by another program into the same file, do not match.
          </p>
        </div>
      );
    case "no_access_log":
      return (
        <p>
          Add an <code>access_log</code> to the http block (see the <Link to={configLink()}>Config tab</Link>
          ), and check that the host runs an agent that reads access logs.
        </p>
      );
    default:
      return null;
  }
}

/** One banner per group; each is a region named "why … is missing" so it can be found. */
export function MissingBanners({ groups, ...fix }: { groups: readonly MissingGroup[] } & FixProps) {
  if (groups.length === 0) return null;
  return (
    <div className="missing-banners">
      {groups.map((group) => {
        const label = figuresLabel(group.figures);
        return (
          <section
            key={group.figures.join(",")}
            className={`banner banner-${severityOf(group.reason)}`}
            aria-label={`why ${label.toLowerCase()} ${group.figures.length > 1 ? "are" : "is"} missing`}
          >
            <p className="missing-headline">
              <strong>{label}: not measured.</strong> {describeGroup(group)}
            </p>
            <Details group={group} {...fix} />
          </section>
        );
      })}
    </div>
  );
}
