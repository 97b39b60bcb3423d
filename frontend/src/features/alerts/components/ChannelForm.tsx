/** Create or edit a notification channel (admin): its settings per kind, and its secrets. */
import { type FormEvent, useState } from "react";
import { useSaveChannel } from "../api/alerts";
import { CHANNEL_KINDS, type Channel, type ChannelKind, EMAIL_SECURITIES, type EmailSecurity, type SecretName } from "../api/types";
import {
  type ChannelDraft,
  type SecretDraft,
  checkChannelDraft,
  draftFromChannel,
  newChannelDraft,
} from "../utils/channel-form";
import { SecretField } from "./SecretField";

interface ChannelFormProps {
  /** The channel being edited; absent for a new one. */
  channel?: Channel;
  onDone: () => void;
}

function Text({
  label,
  value,
  onChange,
  placeholder,
  type = "text",
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  type?: string;
}) {
  return (
    <label className="field">
      {label}
      <input type={type} value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}

export function ChannelForm({ channel, onDone }: ChannelFormProps) {
  const save = useSaveChannel();
  const [draft, setDraft] = useState<ChannelDraft>(() => (channel ? draftFromChannel(channel) : newChannelDraft()));
  const [formError, setFormError] = useState<string | null>(null);
  const set = <K extends keyof ChannelDraft>(field: K, value: ChannelDraft[K]) =>
    setDraft((current) => ({ ...current, [field]: value }));
  const setSecret = (name: SecretName, value: SecretDraft) =>
    setDraft((current) => ({ ...current, secrets: { ...current.secrets, [name]: value } }));
  const isSet = (name: SecretName) => channel?.secrets_set.includes(name) ?? false;

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const check = checkChannelDraft(draft, channel);
    if (!check.ok) {
      setFormError(check.error);
      return;
    }
    setFormError(null);
    save.mutate({ channelId: channel?.id ?? null, body: check.body }, { onSuccess: onDone });
  };

  const error = formError ?? (save.error ? `Could not save the channel: ${save.error.message}` : null);
  return (
    <form
      className="card channel-form"
      aria-label={channel ? `edit channel ${channel.name}` : "new channel"}
      onSubmit={onSubmit}
      noValidate
    >
      <div className="field-row">
        <Text label="Name" value={draft.name} onChange={(v) => set("name", v)} placeholder="ops-webhook" />
        <label className="field">
          Kind
          <select
            value={draft.kind}
            disabled={channel !== undefined}
            onChange={(e) => set("kind", e.target.value as ChannelKind)}
          >
            {CHANNEL_KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {kind}
              </option>
            ))}
          </select>
        </label>
        <label className="choice">
          <input type="checkbox" checked={draft.enabled} onChange={(e) => set("enabled", e.target.checked)} />
          Enabled
        </label>
      </div>
      {draft.kind === "webhook" ? (
        <div className="field-row">
          <Text
            label="URL"
            value={draft.url}
            onChange={(v) => set("url", v)}
            placeholder="https://hooks.example.org/alertmanager"
          />
          <SecretField
            label="Bearer token"
            isSet={isSet("bearer_token")}
            draft={draft.secrets.bearer_token}
            onChange={(v) => setSecret("bearer_token", v)}
            optional
          />
          <span className="field-hint field-wide">
            Posts Alertmanager's webhook format (version 4); the token, if any, goes in <code>Authorization: Bearer</code>.
          </span>
        </div>
      ) : null}
      {draft.kind === "slack" ? (
        <div className="field-row">
          <SecretField
            label="Webhook URL"
            isSet={isSet("webhook_url")}
            draft={draft.secrets.webhook_url}
            onChange={(v) => setSecret("webhook_url", v)}
          />
          <span className="field-hint field-wide">A Slack incoming webhook (https://hooks.slack.com/services/…).</span>
        </div>
      ) : null}
      {draft.kind === "email" ? (
        <>
          <div className="field-row">
            <Text label="SMTP host" value={draft.host} onChange={(v) => set("host", v)} placeholder="smtp.example.org" />
            <Text label="Port" value={draft.port} onChange={(v) => set("port", v)} placeholder="by security" />
            <label className="field">
              Security
              <select value={draft.security} onChange={(e) => set("security", e.target.value as EmailSecurity)}>
                {EMAIL_SECURITIES.map((security) => (
                  <option key={security} value={security}>
                    {security}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <div className="field-row">
            <Text label="Username" value={draft.username} onChange={(v) => set("username", v)} />
            <SecretField
              label="Password"
              isSet={isSet("password")}
              draft={draft.secrets.password}
              onChange={(v) => setSecret("password", v)}
              optional
            />
          </div>
          <div className="field-row">
            <Text label="From" value={draft.fromAddr} onChange={(v) => set("fromAddr", v)} placeholder="fleet@example.org" />
            <label className="field field-wide">
              To
              <input
                value={draft.toAddrs}
                placeholder="ops@example.org, oncall@example.org"
                onChange={(e) => set("toAddrs", e.target.value)}
              />
            </label>
          </div>
        </>
      ) : null}
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : channel ? "Save channel" : "Create channel"}
        </button>{" "}
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
