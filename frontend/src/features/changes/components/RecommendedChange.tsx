/** The engine's checked diff for one or more findings: adjust, then propose and approve it. */
import { useMemo, useState } from "react";
import { Link, useNavigate } from "react-router";
import { ErrorState, Loading } from "../../../components/ui/states";
import { useDebounced } from "../../../lib/use-debounced";
import type { Finding } from "../../config/api/types";
import { useApproveChange, useChangePreview, useCreateChange } from "../api/changes";
import type { Change, Overrides, Proposal, ProposalEdit } from "../api/types";
import { formatArgs, parseArgs, sameArgs } from "../utils/args";
import { DiffView } from "./DiffView";
import { ScoreDelta } from "./ScoreDelta";
import "../changes.css";

// The self-check re-runs this long after the operator stops typing.
const ADJUST_DEBOUNCE_MS = 500;

interface RecommendedChangeProps {
  hostId: number;
  snapshotId: number;
  findings: readonly Finding[];
  /** Operators and admins may propose and approve; viewers only see the diff. */
  canPropose: boolean;
  /** Said instead of "Operators and admins can propose…" when proposing is not possible for another reason. */
  viewOnlyNote?: string;
  onClose: () => void;
}

type Drafts = Record<string, string>;

/** The adjusted arguments that differ from the engine's own, and the edits typed empty. */
export function overridesFrom(
  drafts: Drafts,
  edits: readonly ProposalEdit[],
): { overrides: Overrides; empty: string[] } {
  const overrides: Overrides = {};
  const empty: string[] = [];
  for (const edit of edits) {
    const draft = drafts[edit.id];
    if (draft === undefined || !edit.adjustable) continue;
    const args = parseArgs(draft);
    if (args.length === 0) empty.push(edit.id);
    else if (!sameArgs(args, edit.args)) overrides[edit.id] = args;
  }
  return { overrides, empty };
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

const VERBS: Record<string, string> = { set: "set", add: "add", remove: "remove", replace: "replace with" };

function EditRow({
  edit,
  draft,
  empty,
  onDraft,
}: {
  edit: ProposalEdit;
  draft: string | undefined;
  empty: boolean;
  onDraft: (value: string) => void;
}) {
  const where = (
    <>
      {" "}
      in <code>{edit.context}</code> ({baseName(edit.file)} line {edit.line})
    </>
  );
  if (!edit.adjustable) {
    return (
      <li>
        {VERBS[edit.action] ?? edit.action} <code>{[edit.directive, ...edit.args].join(" ")};</code>
        {where}
      </li>
    );
  }
  return (
    <li className="edit-adjustable">
      <label>
        {VERBS[edit.action] ?? edit.action} <code>{edit.directive}</code>{" "}
        <input
          type="text"
          value={draft ?? formatArgs(edit.args)}
          aria-label={`arguments of ${edit.directive}`}
          aria-invalid={empty ? true : undefined}
          spellCheck={false}
          onChange={(e) => onDraft(e.target.value)}
        />
        ;
      </label>
      {where}
      {empty ? (
        <p className="form-error" role="alert">
          {edit.directive} needs at least one argument
        </p>
      ) : null}
    </li>
  );
}

/** "V-args at line 11: ..." for a finding the patch would add (a report's finding dict). */
function describeIntroduced(finding: Record<string, unknown>): string {
  const text = (key: string) => {
    const value = finding[key];
    return typeof value === "string" || typeof value === "number" ? String(value) : "";
  };
  return `${text("rule") || "a finding"} at line ${text("line") || "?"}: ${text("message")}`;
}

function SelfCheck({ proposal }: { proposal: Proposal }) {
  if (proposal.ok) {
    return (
      <p className="self-check self-check-ok" role="status">
        Self-check passed: after the patch the finding{proposal.keys.length > 1 ? "s are" : " is"} gone and no new error
        or warning appears.
      </p>
    );
  }
  return (
    <div className="self-check self-check-failed" role="alert">
      <strong>No change is offered for this:</strong> {proposal.reason || "the engine did not say why"}
      {proposal.introduced.length > 0 ? (
        <ul>
          {proposal.introduced.map((finding, i) => (
            <li key={i}>{describeIntroduced(finding)}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function Actions({
  hostId,
  keys,
  overrides,
  ready,
}: {
  hostId: number;
  keys: readonly string[];
  overrides: Overrides;
  ready: boolean;
}) {
  const navigate = useNavigate();
  const create = useCreateChange(hostId);
  const approve = useApproveChange();
  const [comment, setComment] = useState("");
  const [created, setCreated] = useState<Change | null>(null);
  const busy = create.isPending || approve.isPending;

  const propose = async (): Promise<Change> => {
    const change = await create.mutateAsync({ findingKeys: keys, overrides, comment: comment.trim() });
    setCreated(change);
    return change;
  };
  const approveAndOpen = async (change: Change) => {
    await approve.mutateAsync({ changeId: change.id, comment: comment.trim() });
    await navigate(`/changes/${change.id}`);
  };
  // Errors are shown from the mutations' state below; the promise only sequences the steps.
  const run = (work: () => Promise<unknown>) => void work().catch(() => undefined);

  return (
    <div className="change-actions">
      {created ? (
        <p role="status">
          Proposed as <Link to={`/changes/${created.id}`}>change {created.id}</Link>: waiting for approval.
        </p>
      ) : (
        <label className="field">
          Comment (optional)
          <textarea value={comment} rows={2} maxLength={2000} onChange={(e) => setComment(e.target.value)} />
        </label>
      )}
      <div className="form-actions">
        {created ? (
          <button type="button" className="primary" disabled={busy} onClick={() => run(() => approveAndOpen(created))}>
            Approve
          </button>
        ) : (
          <>
            <button type="button" disabled={busy || !ready} onClick={() => run(propose)}>
              Propose
            </button>
            <button
              type="button"
              className="primary"
              disabled={busy || !ready}
              onClick={() => run(async () => approveAndOpen(await propose()))}
            >
              Approve and apply
            </button>
          </>
        )}
      </div>
      {create.error ? (
        <p className="form-error" role="alert">
          Could not propose the change: {create.error.message}
        </p>
      ) : null}
      {approve.error ? (
        <p className="form-error" role="alert">
          Could not approve the change: {approve.error.message}
        </p>
      ) : null}
    </div>
  );
}

export function RecommendedChange({
  hostId,
  snapshotId,
  findings,
  canPropose,
  viewOnlyNote = "Operators and admins can propose and approve this change.",
  onClose,
}: RecommendedChangeProps) {
  const keys = useMemo(() => findings.map((f) => f.key), [findings]);
  const [drafts, setDrafts] = useState<Drafts>({});
  const settledDrafts = useDebounced(drafts, ADJUST_DEBOUNCE_MS);
  const base = useChangePreview(hostId, snapshotId, keys, {});
  const baseEdits = base.data?.edits ?? [];
  const { overrides, empty } = overridesFrom(settledDrafts, baseEdits);
  const adjusted = Object.keys(overrides).length > 0;
  const tuned = useChangePreview(hostId, snapshotId, keys, overrides, adjusted);
  const preview = adjusted ? tuned : base;
  const proposal = preview.data;
  const typing = drafts !== settledDrafts;
  const checking = typing || preview.isFetching;
  const rules = [...new Set(findings.map((f) => f.rule))].join(", ");

  return (
    <section className="recommended-change" aria-label="recommended change">
      <header className="recommended-change-head">
        <h3>Recommended change: {rules}</h3>
        {findings.length > 1 ? <span className="muted">{findings.length} findings fixed together</span> : null}
        <button type="button" className="small" onClick={onClose}>
          Close
        </button>
      </header>
      {base.isPending ? <Loading what="Asking the engine for the diff" /> : null}
      {base.isError ? <ErrorState error={base.error} title="Could not make the diff" /> : null}
      {preview.isError && adjusted ? (
        <ErrorState error={preview.error} title="Could not check the adjusted diff" />
      ) : null}
      {proposal ? (
        <>
          <ul className="edit-list" aria-label="edits">
            {baseEdits.map((edit) => (
              <EditRow
                key={edit.id}
                edit={edit}
                draft={drafts[edit.id]}
                empty={empty.includes(edit.id)}
                onDraft={(value) => setDrafts((current) => ({ ...current, [edit.id]: value }))}
              />
            ))}
          </ul>
          {checking ? (
            <p className="muted" role="status">
              Checking the adjusted diff…
            </p>
          ) : (
            <SelfCheck proposal={proposal} />
          )}
          <ScoreDelta
            before={proposal.score_before}
            after={proposal.score_after}
            note="after the patch, as the engine scores it"
          />
          <DiffView diff={proposal.diff} />
          {canPropose ? (
            proposal.ok ? (
              <Actions hostId={hostId} keys={keys} overrides={overrides} ready={!checking && empty.length === 0} />
            ) : null
          ) : (
            <p className="muted">{viewOnlyNote}</p>
          )}
        </>
      ) : null}
    </section>
  );
}
