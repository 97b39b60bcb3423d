/** The agent's apply steps of a change, read from its event trail (docs/changes.md, section 2). */
import type { ChangeEvent } from "../api/types";
import { IN_FLIGHT } from "../api/types";

/** The steps of a safe apply, in order; `outcome` closes every action. */
export const APPLY_STEPS = ["received", "check", "backup", "write", "test", "reload", "verify"] as const;

const STEP_LABELS: Record<string, string> = {
  received: "received by the agent",
  check: "files still as the diff expects",
  backup: "back up the files",
  write: "write the new files",
  test: "nginx -t",
  reload: "reload nginx",
  verify: "new workers, stub_status, error log",
  restore: "restore the previous files",
};

export type StepState = "pending" | "running" | "ok" | "failed" | "stopped" | "not run";

export interface StepView {
  step: string;
  label: string;
  state: StepState;
  /** nginx's or the agent's own words (on failure, what went wrong). */
  message: string;
  at: string | null;
  /** A step of the way back after a failure (restore, reload). */
  recovery: boolean;
}

export type OutcomeState = "pending" | "verified" | "refused" | "rolled_back" | "failed";

export interface OutcomeView {
  state: OutcomeState;
  message: string;
  at: string | null;
  /** Why the agent refused or which step failed (`detail.reason` / `detail.failed_step`). */
  reason: string | null;
}

export interface ApplyProgress {
  steps: StepView[];
  outcome: OutcomeView;
}

const OUTCOMES: ReadonlySet<string> = new Set(["verified", "refused", "rolled_back", "failed"]);

function stateOf(stepStatus: string | null, inFlight: boolean): StepState {
  if (stepStatus === "failed") return "failed";
  if (stepStatus === "started") return inFlight ? "running" : "stopped";
  return "ok";
}

function stepView(step: string, event: ChangeEvent, inFlight: boolean, recovery: boolean): StepView {
  return {
    step,
    label: STEP_LABELS[step] ?? step,
    state: stateOf(event.step_status, inFlight),
    message: event.message,
    at: event.at,
    recovery,
  };
}

function detailText(detail: Record<string, unknown>, key: string): string | null {
  const value = detail[key];
  return typeof value === "string" && value ? value : null;
}

/**
 * Each apply step with its state and message, then the recovery steps after a failure, then
 * the outcome. A step reported twice (started, then ok or failed) shows its last report;
 * steps not reached are `pending` while the change is in flight and `not run` once it is over.
 */
export function applyProgress(events: readonly ChangeEvent[], status: string): ApplyProgress {
  const inFlight = IN_FLIGHT.has(status);
  const reports = events.filter((e) => e.step !== null && e.step !== "outcome");
  const failedAt = reports.findIndex((e) => e.step_status === "failed");
  const main = failedAt < 0 ? reports : reports.slice(0, failedAt + 1);
  const afterFailure = failedAt < 0 ? [] : reports.slice(failedAt + 1);

  const steps: StepView[] = APPLY_STEPS.map((step) => {
    const last = main.filter((e) => e.step === step).at(-1);
    if (last) return stepView(step, last, inFlight, false);
    return {
      step,
      label: STEP_LABELS[step] ?? step,
      state: inFlight && failedAt < 0 ? "pending" : "not run",
      message: "",
      at: null,
      recovery: false,
    };
  });
  for (const event of afterFailure) {
    const step = event.step ?? "";
    const previous = steps.at(-1);
    if (previous?.recovery && previous.step === step) steps[steps.length - 1] = stepView(step, event, inFlight, true);
    else steps.push(stepView(step, event, inFlight, true));
  }

  const final = events.filter((e) => e.step === "outcome").at(-1);
  const outcomeStatus = final?.step_status ?? "";
  const outcome: OutcomeView = final
    ? {
        state: OUTCOMES.has(outcomeStatus) ? (outcomeStatus as OutcomeState) : "failed",
        message: final.message,
        at: final.at,
        reason: detailText(final.detail, "reason") ?? detailText(final.detail, "failed_step"),
      }
    : { state: "pending", message: "", at: null, reason: null };
  return { steps, outcome };
}

/** Whether the agent has been asked to apply the change (its steps are worth showing). */
export function reachedAgent(status: string, events: readonly ChangeEvent[]): boolean {
  return IN_FLIGHT.has(status) || events.some((e) => e.step !== null);
}
