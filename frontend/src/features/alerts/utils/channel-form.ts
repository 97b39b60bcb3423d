/** The channel form's draft (one per kind) and its checked conversion to the body the API takes. */
import { formatLatency } from "../../../lib/format";
import type {
  Channel,
  ChannelBody,
  ChannelKind,
  ChannelSettings,
  Delivery,
  EmailSecurity,
  SecretName,
} from "../api/types";

/** What the admin did with one secret: typed a new value, asked to clear it, or neither (keep). */
export interface SecretDraft {
  value: string;
  clear: boolean;
}

export interface ChannelDraft {
  name: string;
  kind: ChannelKind;
  enabled: boolean;
  url: string;
  host: string;
  port: string;
  security: EmailSecurity;
  username: string;
  fromAddr: string;
  /** Addresses separated by commas or new lines. */
  toAddrs: string;
  secrets: Record<SecretName, SecretDraft>;
}

export type ChannelCheck = { ok: true; body: ChannelBody } | { ok: false; error: string };

/** The secrets each kind stores (docs/alerts.md, channels table). */
export const SECRETS_OF: Record<ChannelKind, readonly SecretName[]> = {
  webhook: ["bearer_token"],
  slack: ["webhook_url"],
  email: ["password"],
};

const UNTOUCHED: SecretDraft = { value: "", clear: false };

export function newChannelDraft(kind: ChannelKind = "webhook"): ChannelDraft {
  return {
    name: "",
    kind,
    enabled: true,
    url: "",
    host: "",
    port: "",
    security: "starttls",
    username: "",
    fromAddr: "",
    toAddrs: "",
    secrets: { bearer_token: UNTOUCHED, webhook_url: UNTOUCHED, password: UNTOUCHED },
  };
}

export function draftFromChannel(channel: Channel): ChannelDraft {
  const s = channel.settings;
  return {
    ...newChannelDraft(channel.kind),
    name: channel.name,
    enabled: channel.enabled,
    url: s.url ?? "",
    host: s.host ?? "",
    port: s.port === undefined || s.port === null ? "" : String(s.port),
    security: s.security ?? "starttls",
    username: s.username ?? "",
    fromAddr: s.from_addr ?? "",
    toAddrs: (s.to_addrs ?? []).join(", "),
  };
}

/** The value to send for a secret: "" clears it, a typed value replaces it, undefined keeps it. */
export function secretToSend(draft: SecretDraft): string | undefined {
  if (draft.clear) return "";
  return draft.value ? draft.value : undefined;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** Whether a secret will hold a value after the save. */
function willBeSet(draft: SecretDraft, name: SecretName, stored: Channel | undefined): boolean {
  if (draft.clear) return false;
  return draft.value !== "" || (stored?.secrets_set.includes(name) ?? false);
}

/** Check a draft; `stored` is the channel being edited (its secrets_set says what is kept). */
export function checkChannelDraft(draft: ChannelDraft, stored?: Channel): ChannelCheck {
  const name = draft.name.trim();
  if (!name) return { ok: false, error: "Name is required" };
  let settings: ChannelSettings = {};
  if (draft.kind === "webhook") {
    const url = draft.url.trim();
    if (!isHttpUrl(url)) return { ok: false, error: "URL must be an http:// or https:// address" };
    settings = { url };
  } else if (draft.kind === "slack") {
    const hook = draft.secrets.webhook_url;
    if (!willBeSet(hook, "webhook_url", stored)) return { ok: false, error: "Slack needs its incoming webhook URL" };
    if (hook.value && !isHttpUrl(hook.value.trim())) return { ok: false, error: "Webhook URL must be an https:// address" };
  } else {
    const host = draft.host.trim();
    if (!host) return { ok: false, error: "SMTP host is required" };
    const port = draft.port.trim() ? Number(draft.port) : null;
    if (port !== null && (!Number.isInteger(port) || port < 1 || port > 65_535)) {
      return { ok: false, error: "Port must be a whole number from 1 to 65535, or empty" };
    }
    const fromAddr = draft.fromAddr.trim();
    if (!fromAddr.includes("@")) return { ok: false, error: "From must be an email address" };
    const toAddrs = draft.toAddrs
      .split(/[,\n]/)
      .map((a) => a.trim())
      .filter(Boolean);
    if (toAddrs.length === 0) return { ok: false, error: "Give at least one address to send to" };
    const bad = toAddrs.find((a) => !a.includes("@"));
    if (bad) return { ok: false, error: `"${bad}" is not an email address` };
    const username = draft.username.trim() || null;
    settings = { host, port, security: draft.security, username, from_addr: fromAddr, to_addrs: toAddrs };
  }
  const secrets: ChannelBody["secrets"] = {};
  for (const secret of SECRETS_OF[draft.kind]) {
    const value = secretToSend(draft.secrets[secret]);
    if (value !== undefined) secrets[secret] = secret === "webhook_url" ? value.trim() : value;
  }
  return { ok: true, body: { name, kind: draft.kind, enabled: draft.enabled, settings, secrets } };
}

/** Where a channel sends, in a few words, for the list (never a secret). */
export function channelTarget(channel: Channel): string {
  if (channel.kind === "webhook") return channel.settings.url ?? "";
  if (channel.kind === "slack") return channel.secrets_set.includes("webhook_url") ? "incoming webhook set" : "no webhook URL";
  const to = channel.settings.to_addrs ?? [];
  const port = channel.settings.port ? `:${channel.settings.port}` : "";
  return `${to.join(", ")} via ${channel.settings.host ?? "?"}${port}`;
}

/** What the test notification came to, in one line: "sent (HTTP 200, 35 ms)" or "failed: …". */
export function testOutcome(delivery: Delivery): { ok: boolean; text: string } {
  const last = delivery.attempts.at(-1);
  const details: string[] = [];
  if (typeof last?.status_code === "number") details.push(`HTTP ${last.status_code}`);
  if (typeof last?.duration_ms === "number") details.push(formatLatency(last.duration_ms / 1000));
  const suffix = details.length > 0 ? ` (${details.join(", ")})` : "";
  if (delivery.status === "sent") return { ok: true, text: `sent${suffix}` };
  if (delivery.status === "failed") return { ok: false, text: `failed${suffix}: ${last?.error ?? "no reason given"}` };
  // Still pending or retrying: the test is sent at once, so this says why it has not gone yet.
  return { ok: false, text: `${delivery.status}${suffix}${last?.error ? `: ${last.error}` : ""}` };
}
