/** Host labels; operators and admins add and remove them, each change saved at once. */
import { type FormEvent, useState } from "react";
import type { Labels } from "../../../api/types";
import { LabelChips } from "../../../components/ui/LabelChips";
import { type LabelPair, parseLabelInput } from "../../../lib/labels";
import { useUpdateHostLabels } from "../api/host";

export function LabelEditor({ hostId, labels, canEdit }: { hostId: number; labels: Labels; canEdit: boolean }) {
  const update = useUpdateHostLabels(hostId);
  const [draft, setDraft] = useState("");
  const [inputError, setInputError] = useState<string | null>(null);

  if (!canEdit) return <LabelChips labels={labels} />;

  const add = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const parsed = parseLabelInput(draft);
    if (!parsed.ok) {
      setInputError(parsed.error);
      return;
    }
    setInputError(null);
    // The draft is cleared only once the server has the label, so a failed save loses nothing.
    update.mutate({ ...labels, [parsed.pair.key]: parsed.pair.value }, { onSuccess: () => setDraft("") });
  };

  const remove = (pair: LabelPair) => {
    const next = { ...labels };
    delete next[pair.key];
    update.mutate(next);
  };

  const error = inputError ?? update.error?.message ?? null;
  return (
    <div className="label-editor">
      <LabelChips labels={labels} onRemove={remove} disabled={update.isPending} />
      <form onSubmit={add} className="inline-form">
        <label>
          <span className="visually-hidden">New label (key=value)</span>
          <input
            placeholder="key=value"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            aria-invalid={inputError ? true : undefined}
          />
        </label>
        <button type="submit" className="small" disabled={update.isPending || !draft.trim()}>
          Add label
        </button>
      </form>
      {error ? (
        <p role="alert" className="form-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
