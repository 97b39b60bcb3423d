/** Form that creates an enrolment token, then shows it once with the commands to run. */
import { type FormEvent, useState } from "react";
import type { EnrollmentTokenCreated } from "../../../api/types";
import { CopyButton } from "../../../components/ui/CopyButton";
import { formatDateTime } from "../../../lib/format";
import { parseLabelList } from "../../../lib/labels";
import { useCreateEnrollmentToken } from "../api/enrollment";

function Command({ label, text }: { label: string; text: string }) {
  return (
    <div className="command">
      <div className="command-label">{label}</div>
      <div className="command-row">
        <pre tabIndex={0}>{text}</pre>
        <CopyButton text={text} label={`Copy: ${label}`} />
      </div>
    </div>
  );
}

/** Step 1: the agent's wheel from this server, with the SHA-256 that pip checks. */
function InstallStep({ created }: { created: EnrollmentTokenCreated }) {
  const label = "1. Install the agent on the nginx host (as root)";
  const wheel = created.agent_wheel;
  if (!wheel || !created.install_command) {
    return (
      <div className="command">
        <div className="command-label">{label}</div>
        <p className="banner banner-warning">
          This server has no agent package to offer: its wheel is not built (run <code>make build</code>, or use the
          production image, which includes it).
        </p>
      </div>
    );
  }
  return (
    <>
      <Command label={label} text={created.install_command} />
      <p className="muted" aria-label="agent package">
        From this server: <a href={wheel.url}>{wheel.filename}</a>. pip refuses it unless its SHA-256 is{" "}
        <code aria-label="SHA-256">{wheel.sha256}</code>
      </p>
    </>
  );
}

function CreatedToken({ created, onDone }: { created: EnrollmentTokenCreated; onDone: () => void }) {
  return (
    <div className="token-created" aria-label="new enrolment token">
      <p className="banner banner-warning" role="alert">
        <strong>Copy these commands now.</strong> The token is shown only once; it cannot be retrieved later. It
        expires {formatDateTime(created.expires_at)} and can enrol {created.max_uses}{" "}
        {created.max_uses === 1 ? "host" : "hosts"}.
      </p>
      <InstallStep created={created} />
      <Command label="2. Enrol it (as root, so it can read the nginx config)" text={created.enroll_command} />
      <div className="command">
        <div className="command-label">Token</div>
        <div className="command-row">
          <pre tabIndex={0}>{created.token}</pre>
          <CopyButton text={created.token} label="Copy the token" />
        </div>
      </div>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

function positiveInteger(text: string, name: string, max: number): number | string {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) return `${name} must be a whole number of at least 1`;
  if (value > max) return `${name} must be at most ${max}`;
  return value;
}

export function CreateTokenForm() {
  const create = useCreateEnrollmentToken();
  const [labels, setLabels] = useState("");
  const [expiresHours, setExpiresHours] = useState("24");
  const [maxUses, setMaxUses] = useState("1");
  const [formError, setFormError] = useState<string | null>(null);

  if (create.data) return <CreatedToken created={create.data} onDone={() => create.reset()} />;

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const parsedLabels = parseLabelList(labels);
    const hours = positiveInteger(expiresHours, "Expiry (hours)", 24 * 365);
    const uses = positiveInteger(maxUses, "Max uses", 10_000);
    if (!parsedLabels.ok) {
      setFormError(parsedLabels.error);
      return;
    }
    if (typeof hours === "string" || typeof uses === "string") {
      setFormError(typeof hours === "string" ? hours : String(uses));
      return;
    }
    setFormError(null);
    create.mutate({ labels: parsedLabels.labels, expires_in_hours: hours, max_uses: uses });
  };

  const error = formError ?? create.error?.message ?? null;
  return (
    <form className="card form-grid" onSubmit={onSubmit} aria-label="create enrolment token">
      <label>
        Labels for hosts enrolled with it
        <input placeholder="env=prod, role=edge" value={labels} onChange={(e) => setLabels(e.target.value)} />
      </label>
      <label>
        Expires after (hours)
        <input type="number" min={1} value={expiresHours} onChange={(e) => setExpiresHours(e.target.value)} />
      </label>
      <label>
        Max uses
        <input type="number" min={1} value={maxUses} onChange={(e) => setMaxUses(e.target.value)} />
      </label>
      {error ? (
        <p role="alert" className="form-error">
          {error}
        </p>
      ) : null}
      <div>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create enrolment token"}
        </button>
      </div>
    </form>
  );
}
