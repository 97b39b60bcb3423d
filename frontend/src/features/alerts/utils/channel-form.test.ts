import { describe, expect, it } from "vitest";
import { channel, delivery } from "../test/factories";
import { checkChannelDraft, draftFromChannel, newChannelDraft, secretToSend, testOutcome } from "./channel-form";

describe("secrets", () => {
  it("keeps a secret left empty, replaces it with a typed value, clears it when asked", () => {
    expect(secretToSend({ value: "", clear: false })).toBeUndefined();
    expect(secretToSend({ value: "s3cret", clear: false })).toBe("s3cret");
    expect(secretToSend({ value: "", clear: true })).toBe("");
    expect(secretToSend({ value: "typed", clear: true })).toBe("");
  });

  it("sends no secret for an edit that did not touch it, so the stored one is kept", () => {
    const stored = channel();
    expect(checkChannelDraft(draftFromChannel(stored), stored)).toEqual({
      ok: true,
      body: {
        name: "ops-webhook",
        kind: "webhook",
        enabled: true,
        settings: { url: "https://hooks.example.org/alerts" },
        secrets: {},
      },
    });
  });

  it("sends only the secrets of the channel's kind", () => {
    const draft = {
      ...newChannelDraft("webhook"),
      name: "hook",
      url: "http://127.0.0.1:9/hook",
      secrets: {
        bearer_token: { value: "t0ken", clear: false },
        webhook_url: { value: "https://stale", clear: false },
        password: { value: "", clear: true },
      },
    };
    const check = checkChannelDraft(draft);
    expect(check.ok && check.body.secrets).toEqual({ bearer_token: "t0ken" });
  });

  it("wants Slack's webhook URL, stored or typed, and never cleared", () => {
    const draft = { ...newChannelDraft("slack"), name: "slack" };
    expect(checkChannelDraft(draft)).toEqual({ ok: false, error: "Slack needs its incoming webhook URL" });
    const stored = channel({ kind: "slack", settings: {}, secrets_set: ["webhook_url"] });
    expect(checkChannelDraft(draftFromChannel(stored), stored)).toMatchObject({ ok: true, body: { secrets: {} } });
    const cleared = { ...draftFromChannel(stored), secrets: { ...draft.secrets, webhook_url: { value: "", clear: true } } };
    expect(checkChannelDraft(cleared, stored).ok).toBe(false);
  });
});

describe("settings per kind", () => {
  it("checks a webhook's URL", () => {
    const draft = { ...newChannelDraft("webhook"), name: "hook", url: "ftp://x" };
    expect(checkChannelDraft(draft)).toEqual({ ok: false, error: "URL must be an http:// or https:// address" });
  });

  it("builds an email channel's settings with its list of recipients", () => {
    const draft = {
      ...newChannelDraft("email"),
      name: "mail",
      host: "smtp.example.org",
      port: "465",
      security: "tls" as const,
      username: "fleet",
      fromAddr: "fleet@example.org",
      toAddrs: "ops@example.org,\n oncall@example.org",
    };
    const check = checkChannelDraft(draft);
    expect(check.ok && check.body.settings).toEqual({
      host: "smtp.example.org",
      port: 465,
      security: "tls",
      username: "fleet",
      from_addr: "fleet@example.org",
      to_addrs: ["ops@example.org", "oncall@example.org"],
    });
    expect(checkChannelDraft({ ...draft, port: "99999" })).toEqual({
      ok: false,
      error: "Port must be a whole number from 1 to 65535, or empty",
    });
    // No port: the usual one of the security mode; no username: no SMTP authentication.
    const plain = checkChannelDraft({ ...draft, port: " ", username: "" });
    expect(plain.ok && plain.body.settings).toMatchObject({ port: null, username: null });
    expect(checkChannelDraft({ ...draft, toAddrs: "ops" })).toEqual({ ok: false, error: '"ops" is not an email address' });
  });
});

describe("testOutcome", () => {
  it("says sent with the status code and time, or failed with the error", () => {
    expect(testOutcome(delivery({ event: "test" }))).toEqual({ ok: true, text: "sent (HTTP 200, 35 ms)" });
    const failed = delivery({
      status: "failed",
      attempts: [
        { n: 1, at: "2026-11-21T10:00:00Z", ok: false, status_code: null, error: "connection refused", duration_ms: 2 },
      ],
    });
    expect(testOutcome(failed)).toEqual({ ok: false, text: "failed (2 ms): connection refused" });
  });
});
