/** The small form that acknowledges (mutes) a finding: scope, target, reason, optional expiry. */
import { type FormEvent, useState } from "react";
import { useCreateAck } from "../api/acks";
import type { Finding } from "../api/types";
import { type AckFormErrors, type AckFormValues, EMPTY_ACK_FORM, REASON_MAX, validateAckForm } from "../utils/ack-form";

interface AckFormProps {
  finding: Finding;
  hostId: number;
  onDone: () => void;
}

export function AckForm({ finding, hostId, onDone }: AckFormProps) {
  const [values, setValues] = useState<AckFormValues>(EMPTY_ACK_FORM);
  const [errors, setErrors] = useState<AckFormErrors>({});
  const createAck = useCreateAck();
  const set = <K extends keyof AckFormValues>(key: K, value: AckFormValues[K]) =>
    setValues((current) => ({ ...current, [key]: value }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const result = validateAckForm(values, finding, hostId, Date.now());
    if (!result.ok) {
      setErrors(result.errors);
      return;
    }
    setErrors({});
    createAck.mutate(result.body, { onSuccess: onDone });
  };

  return (
    <form className="ack-form" aria-label="acknowledge finding" onSubmit={submit} noValidate>
      <fieldset>
        <legend>Scope</legend>
        <label>
          <input type="radio" name="scope" checked={values.scope === "host"} onChange={() => set("scope", "host")} />
          this host
        </label>
        <label>
          <input type="radio" name="scope" checked={values.scope === "fleet"} onChange={() => set("scope", "fleet")} />
          whole fleet
        </label>
      </fieldset>
      <fieldset>
        <legend>Mute</legend>
        <label>
          <input
            type="radio"
            name="target"
            checked={values.target === "finding"}
            onChange={() => set("target", "finding")}
          />
          this finding
        </label>
        <label>
          <input type="radio" name="target" checked={values.target === "rule"} onChange={() => set("target", "rule")} />
          every {finding.rule} finding
        </label>
      </fieldset>
      <label className="field">
        Reason
        <textarea
          value={values.reason}
          maxLength={REASON_MAX}
          rows={2}
          aria-invalid={errors.reason ? true : undefined}
          onChange={(e) => set("reason", e.target.value)}
        />
      </label>
      {errors.reason ? (
        <p className="form-error" role="alert">
          {errors.reason}
        </p>
      ) : null}
      <label className="field">
        Expires after (optional)
        <input
          type="date"
          value={values.expiresOn}
          aria-invalid={errors.expiresOn ? true : undefined}
          onChange={(e) => set("expiresOn", e.target.value)}
        />
      </label>
      {errors.expiresOn ? (
        <p className="form-error" role="alert">
          {errors.expiresOn}
        </p>
      ) : null}
      {createAck.error ? (
        <p className="form-error" role="alert">
          {createAck.error.message}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={createAck.isPending}>
          Mute finding
        </button>
        <button type="button" onClick={onDone} disabled={createAck.isPending}>
          Cancel
        </button>
      </div>
    </form>
  );
}
