/**
 * A secret of a channel: a password input that never shows the stored value. When one is stored,
 * it says so, an empty input keeps it, and "clear" removes it.
 */
import { useId } from "react";
import type { SecretDraft } from "../utils/channel-form";

interface SecretFieldProps {
  label: string;
  /** Whether the server holds a value (the channel's `secrets_set` names it). */
  isSet: boolean;
  draft: SecretDraft;
  onChange: (draft: SecretDraft) => void;
  /** Whether the channel works without it (a clear option is offered only then). */
  optional?: boolean;
}

export function SecretField({ label, isSet, draft, onChange, optional = false }: SecretFieldProps) {
  const id = useId();
  return (
    <div className="field secret-field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="password"
        autoComplete="new-password"
        value={draft.value}
        disabled={draft.clear}
        placeholder={isSet ? "set — leave empty to keep" : optional ? "optional" : ""}
        aria-describedby={isSet ? `${id}-hint` : undefined}
        onChange={(e) => onChange({ value: e.target.value, clear: false })}
      />
      {isSet ? (
        <span id={`${id}-hint`} className="field-hint">
          {draft.clear ? "will be cleared" : "set — leave empty to keep"}
        </span>
      ) : null}
      {isSet && optional ? (
        <label className="secret-clear">
          <input
            type="checkbox"
            aria-label={`clear the stored ${label.toLowerCase()}`}
            checked={draft.clear}
            onChange={(e) => onChange({ value: "", clear: e.target.checked })}
          />
          clear
        </label>
      ) : null}
    </div>
  );
}
