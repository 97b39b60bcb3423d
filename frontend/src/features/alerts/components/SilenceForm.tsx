/** Create a silence (operators and admins): which alerts, until when, and why. */
import { type FormEvent, useState } from "react";
import type { Rule } from "../api/types";
import { useCreateSilence } from "../api/alerts";
import {
  EMPTY_MATCHER,
  type MatcherDraft,
  type SilenceDraft,
  checkSilenceDraft,
} from "../utils/silence-form";
import { TextField } from "./TextField";

interface SilenceFormProps {
  rules: readonly Rule[];
  initial: SilenceDraft;
}

export function SilenceForm({ rules, initial }: SilenceFormProps) {
  const create = useCreateSilence();
  const [draft, setDraft] = useState<SilenceDraft>(initial);
  const [formError, setFormError] = useState<string | null>(null);

  const set = <K extends keyof SilenceDraft>(field: K, value: SilenceDraft[K]) =>
    setDraft((current) => ({ ...current, [field]: value }));
  const setMatcher = (index: number, change: Partial<MatcherDraft>) =>
    set(
      "matchers",
      draft.matchers.map((row, i) => (i === index ? { ...row, ...change } : row)),
    );

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const check = checkSilenceDraft(draft, Date.now());
    if (!check.ok) {
      setFormError(check.error);
      return;
    }
    setFormError(null);
    create.mutate(check.body, {
      // Cleared only once stored, so a refused silence keeps what was typed.
      onSuccess: () => setDraft((current) => ({ ...current, reason: "" })),
    });
  };

  const error = formError ?? (create.error ? `Could not create the silence: ${create.error.message}` : null);
  return (
    <form className="card silence-form" aria-label="new silence" onSubmit={onSubmit} noValidate>
      <div className="field-row">
        <label className="field">
          Rule (optional)
          <select value={draft.ruleId} onChange={(e) => set("ruleId", e.target.value)}>
            <option value="">any rule</option>
            {rules.map((rule) => (
              <option key={rule.id} value={String(rule.id)}>
                {rule.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <fieldset className="choice-group">
        <legend>Matchers (all must hold; the label "host" matches the hostname)</legend>
        {draft.matchers.map((row, index) => {
          const n = index + 1;
          return (
            <div className="matcher-row" key={index}>
              <input
                aria-label={`Matcher ${n} label`}
                placeholder="label, e.g. host"
                value={row.label}
                onChange={(e) => setMatcher(index, { label: e.target.value })}
              />
              <select
                aria-label={`Matcher ${n} operator`}
                value={row.op}
                onChange={(e) => setMatcher(index, { op: e.target.value === "!=" ? "!=" : "=" })}
              >
                <option value="=">=</option>
                <option value="!=">!=</option>
              </select>
              <input
                aria-label={`Matcher ${n} value`}
                placeholder="value"
                value={row.value}
                onChange={(e) => setMatcher(index, { value: e.target.value })}
              />
              <button
                type="button"
                className="small"
                aria-label={`Remove matcher ${n}`}
                onClick={() => set("matchers", draft.matchers.filter((_, i) => i !== index))}
              >
                ×
              </button>
            </div>
          );
        })}
        <button type="button" className="small" onClick={() => set("matchers", [...draft.matchers, { ...EMPTY_MATCHER }])}>
          Add matcher
        </button>
      </fieldset>
      <fieldset className="choice-group">
        <legend>Ends</legend>
        <div className="ends-row">
          <label className="choice">
            <input
              type="radio"
              name="silence-end"
              checked={draft.endMode === "duration"}
              onChange={() => set("endMode", "duration")}
            />
            after
          </label>
          <TextField
            label="Duration"
            value={draft.duration}
            placeholder="2h"
            disabled={draft.endMode !== "duration"}
            onChange={(v) => set("duration", v)}
            hint="e.g. 30m, 2h, 1d (at most 90d)"
          />
          <label className="choice">
            <input
              type="radio"
              name="silence-end"
              checked={draft.endMode === "until"}
              onChange={() => set("endMode", "until")}
            />
            at
          </label>
          <TextField
            label="End time"
            type="datetime-local"
            value={draft.until}
            disabled={draft.endMode !== "until"}
            onChange={(v) => set("until", v)}
          />
        </div>
      </fieldset>
      <div className="field-row">
        <TextField
          label="Reason"
          value={draft.reason}
          placeholder="why these alerts may stay quiet, e.g. planned maintenance"
          onChange={(v) => set("reason", v)}
          hint="required; shown with the silence"
          wide
        />
      </div>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create silence"}
        </button>
      </div>
    </form>
  );
}
