/** Approve, reject or roll back a change (operator+), each with an optional comment for the trail. */
import { useState } from "react";
import { useNavigate } from "react-router";
import { useApproveChange, useRejectChange, useRollbackChange } from "../api/changes";
import type { Change } from "../api/types";

interface ChangeActionsProps {
  change: Change;
  /** A rollback of this change that is in flight or applied: no second one is offered. */
  rolledBackBy: Change | undefined;
}

export function ChangeActions({ change, rolledBackBy }: ChangeActionsProps) {
  const navigate = useNavigate();
  const approve = useApproveChange();
  const reject = useRejectChange();
  const rollback = useRollbackChange();
  const [comment, setComment] = useState("");
  // A rollout's change is approved by the rollout, with its wave, never ahead of it.
  const byRollout = change.rollout_id !== null;
  const canApprove = change.status === "proposed" && !byRollout;
  const canReject = change.status === "proposed" || change.status === "approved";
  const canRollBack = change.status === "verified" && rolledBackBy === undefined;
  if (!canApprove && !canReject && !canRollBack) return null;
  const busy = approve.isPending || reject.isPending || rollback.isPending;
  const input = { changeId: change.id, comment: comment.trim() };
  const error = approve.error ?? reject.error ?? rollback.error;

  return (
    <section className="change-review card" aria-label="review">
      <label className="field">
        Comment (optional)
        <textarea value={comment} rows={2} maxLength={2000} onChange={(e) => setComment(e.target.value)} />
      </label>
      <div className="form-actions">
        {canApprove ? (
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => approve.mutate(input, { onSuccess: () => setComment("") })}
          >
            Approve
          </button>
        ) : null}
        {canReject ? (
          <button
            type="button"
            className="danger"
            disabled={busy}
            onClick={() => reject.mutate(input, { onSuccess: () => setComment("") })}
          >
            Reject
          </button>
        ) : null}
        {canRollBack ? (
          <button
            type="button"
            className="danger"
            disabled={busy}
            onClick={() =>
              rollback.mutate(input, { onSuccess: (reverse) => void navigate(`/changes/${reverse.id}`) })
            }
          >
            Roll back
          </button>
        ) : null}
      </div>
      {change.status === "proposed" && byRollout ? (
        <p className="muted">Rollout {change.rollout_id} approves this change with its wave.</p>
      ) : null}
      {canRollBack ? (
        <p className="muted">
          Rolling back sends the reverse diff through the same safe path; the click is its approval.
        </p>
      ) : null}
      {error ? (
        <p className="form-error" role="alert">
          Could not {error === approve.error ? "approve" : error === reject.error ? "reject" : "roll back"}:{" "}
          {error.message}
        </p>
      ) : null}
    </section>
  );
}
