/** The agent's safe apply, step by step: received → check → … → verify → outcome. */
import { formatDateTime } from "../../../lib/format";
import type { ChangeEvent } from "../api/types";
import { type OutcomeView, type StepView, applyProgress } from "../utils/steps";

const STATE_TEXT: Record<string, string> = {
  pending: "waiting",
  running: "running…",
  ok: "ok",
  failed: "failed",
  stopped: "did not finish",
  "not run": "not run",
};

const OUTCOME_TEXT: Record<OutcomeView["state"], string> = {
  pending: "waiting for the agent",
  verified: "verified: applied and live",
  refused: "refused: nothing was written",
  rolled_back: "rolled back: the previous files were restored and nginx reloaded",
  failed: "failed: the restore itself failed, someone must look at the host",
};

function Step({ step }: { step: StepView }) {
  return (
    <li
      className={`step step-${step.state.replace(" ", "-")}${step.recovery ? " step-recovery" : ""}`}
      aria-label={`${step.step}: ${STATE_TEXT[step.state]}`}
    >
      <span className="step-dot" aria-hidden="true" />
      <span className="step-name">{step.step}</span>
      <span className="step-label">{step.label}</span>
      <span className="step-state">{STATE_TEXT[step.state]}</span>
      {step.at ? <span className="step-at muted">{formatDateTime(step.at)}</span> : null}
      {step.message ? <pre className="step-message">{step.message}</pre> : null}
    </li>
  );
}

export function ApplySteps({ events, status }: { events: readonly ChangeEvent[]; status: string }) {
  const { steps, outcome } = applyProgress(events, status);
  const state = outcome.state.replace("_", " ");
  return (
    <section className="apply-steps card" aria-label="apply progress">
      <h2>Apply on the host</h2>
      <ol aria-label="apply steps">
        {steps.map((step, i) => (
          <Step key={`${step.step}-${i}`} step={step} />
        ))}
        <li className={`step step-outcome step-${outcome.state}`} aria-label={`outcome: ${state}`}>
          <span className="step-dot" aria-hidden="true" />
          <span className="step-name">outcome</span>
          <span className="step-label">
            {OUTCOME_TEXT[outcome.state]}
            {outcome.reason ? <span className="step-reason"> ({outcome.reason.replace(/_/g, " ")})</span> : null}
          </span>
          <span className="step-state">{outcome.state === "pending" ? "waiting" : state}</span>
          {outcome.at ? <span className="step-at muted">{formatDateTime(outcome.at)}</span> : null}
          {outcome.message && outcome.state !== "verified" ? (
            <pre className="step-message">{outcome.message}</pre>
          ) : null}
        </li>
      </ol>
    </section>
  );
}
