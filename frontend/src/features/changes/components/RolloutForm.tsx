/** The rollout form: one rule's fix on every matching host, canary first, then batches. */
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router";
import { useCreateRollout } from "../api/changes";
import {
  GATE_FIGURES,
  type RolloutFormErrors,
  type RolloutFormField,
  type RolloutFormValues,
  emptyRolloutForm,
  validateRolloutForm,
} from "../utils/rollout-form";

function FieldError({ errors, field }: { errors: RolloutFormErrors; field: RolloutFormField }) {
  const message = errors[field];
  return message ? (
    <span className="form-error" role="alert">
      {message}
    </span>
  ) : null;
}

export function RolloutForm({ initialRule = "" }: { initialRule?: string }) {
  const navigate = useNavigate();
  const create = useCreateRollout();
  const [values, setValues] = useState<RolloutFormValues>(() => emptyRolloutForm(initialRule));
  const [errors, setErrors] = useState<RolloutFormErrors>({});
  const set = <K extends keyof RolloutFormValues>(key: K, value: RolloutFormValues[K]) =>
    setValues((current) => ({ ...current, [key]: value }));
  const invalid = (field: RolloutFormField) => (errors[field] ? true : undefined);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const result = validateRolloutForm(values);
    if (!result.ok) {
      setErrors(result.errors);
      return;
    }
    setErrors({});
    create.mutate(result.body, { onSuccess: (rollout) => void navigate(`/rollouts/${rollout.id}`) });
  };

  return (
    <form className="rollout-form card" aria-label="new rollout" onSubmit={submit} noValidate>
      <div className="form-grid">
        <label>
          Rule
          <input
            value={values.rule}
            placeholder="G-off"
            aria-invalid={invalid("rule")}
            onChange={(e) => set("rule", e.target.value)}
          />
          <FieldError errors={errors} field="rule" />
        </label>
        <label>
          Hosts with labels (optional)
          <input
            value={values.labels}
            placeholder="env=prod, role=edge"
            aria-invalid={invalid("labels")}
            onChange={(e) => set("labels", e.target.value)}
          />
          <FieldError errors={errors} field="labels" />
        </label>
        <label>
          Canary hosts
          <input
            inputMode="numeric"
            value={values.canary}
            aria-invalid={invalid("canary")}
            onChange={(e) => set("canary", e.target.value)}
          />
          <FieldError errors={errors} field="canary" />
        </label>
        <label>
          Batch size
          <input
            inputMode="numeric"
            value={values.batchSize}
            aria-invalid={invalid("batchSize")}
            onChange={(e) => set("batchSize", e.target.value)}
          />
          <FieldError errors={errors} field="batchSize" />
        </label>
      </div>
      <p className="muted">
        Without labels every host of the fleet with a fixable finding of the rule is included; a key given twice
        (env=prod, env=staging) matches either value.
      </p>
      <fieldset className="auto-rollback">
        <legend>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={values.autoRollback}
              onChange={(e) => set("autoRollback", e.target.checked)}
            />
            Roll a host back automatically when its figures regress
          </label>
        </legend>
        {values.autoRollback ? (
          <div className="form-grid">
            <label className="checkbox">
              <input type="checkbox" checked={values.drops} onChange={(e) => set("drops", e.target.checked)} />
              dropped connections fail a check
            </label>
            {GATE_FIGURES.map((figure) => (
              <label key={figure.name}>
                Max rise of {figure.label} (%)
                <input
                  inputMode="decimal"
                  value={values.maxRise[figure.name]}
                  placeholder="no limit"
                  aria-invalid={invalid(figure.name)}
                  onChange={(e) => set("maxRise", { ...values.maxRise, [figure.name]: e.target.value })}
                />
                <FieldError errors={errors} field={figure.name} />
              </label>
            ))}
            <label>
              Failed checks in a row (one every 30 s)
              <input
                inputMode="numeric"
                value={values.checks}
                aria-invalid={invalid("checks")}
                onChange={(e) => set("checks", e.target.value)}
              />
              <FieldError errors={errors} field="checks" />
            </label>
            <label>
              Watch each host for (seconds)
              <input
                inputMode="numeric"
                value={values.watchS}
                aria-invalid={invalid("watchS")}
                onChange={(e) => set("watchS", e.target.value)}
              />
              <FieldError errors={errors} field="watchS" />
            </label>
          </div>
        ) : null}
      </fieldset>
      <label className="field">
        Comment (optional)
        <textarea value={values.comment} rows={2} maxLength={2000} onChange={(e) => set("comment", e.target.value)} />
      </label>
      {create.error ? (
        <p className="form-error" role="alert">
          Could not start the rollout: {create.error.message}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          Start rollout
        </button>
      </div>
    </form>
  );
}
