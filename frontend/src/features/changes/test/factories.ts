/** Builders of changes-API objects for tests; override only what a test is about. */
import type { Change, ChangeDetail, ChangeEvent, Proposal, Rollout } from "../api/types";

export const CONF = "/etc/nginx/nginx.conf";
export const GZIP_KEY = `C-gzip@${CONF}:http/gzip`;

export const GZIP_DIFF = [
  `--- a${CONF}`,
  `+++ b${CONF}`,
  "@@ -4,4 +4,4 @@",
  " }",
  " http {",
  "-    gzip off;",
  "+    gzip on;",
  " }",
  "",
].join("\n");

export function proposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    ok: true,
    reason: "",
    keys: [GZIP_KEY],
    resolved: [GZIP_KEY],
    introduced: [],
    edits: [
      {
        id: "e1",
        key: GZIP_KEY,
        action: "set",
        directive: "gzip",
        args: ["on"],
        file: CONF,
        line: 6,
        context: "http",
        adjustable: true,
      },
    ],
    files: [
      {
        path: CONF,
        base_sha256: "a".repeat(64),
        new_sha256: "b".repeat(64),
        ops: [{ start: 6, count: 1, old: ["    gzip off;"], new: ["    gzip on;"] }],
      },
    ],
    diff: GZIP_DIFF,
    score_before: 81,
    score_after: 84,
    snapshot_id: 1,
    ...overrides,
  };
}

export function change(overrides: Partial<Change> = {}): Change {
  return {
    id: 5,
    host_id: 7,
    hostname: "edge-7",
    kind: "fix",
    reverts_change_id: null,
    rollout_id: null,
    wave: null,
    status: "proposed",
    step: null,
    finding_keys: [GZIP_KEY],
    rules: ["C-gzip"],
    title: "C-gzip: set gzip on",
    diff: GZIP_DIFF,
    edits: [],
    base_snapshot_id: 1,
    created_by: "olga",
    created_at: "2026-11-21T10:00:00Z",
    approved_by: null,
    approved_at: null,
    sent_at: null,
    finished_at: null,
    comment: "",
    outcome_message: null,
    failed_step: null,
    score_before: 81,
    score_after: 84,
    impact: null,
    ...overrides,
  };
}

export function changeEvent(overrides: Partial<ChangeEvent> = {}): ChangeEvent {
  return {
    at: "2026-11-21T10:00:00Z",
    status: "applying",
    step: null,
    step_status: null,
    actor: "agent:host:7",
    message: "",
    detail: {},
    ...overrides,
  };
}

/** The agent's reports of a clean apply, each step `ok`, then `verified`. */
export function verifiedEvents(): ChangeEvent[] {
  return [
    changeEvent({ status: "proposed", actor: "olga", message: "please" }),
    changeEvent({ status: "approved", actor: "olga", message: "approved" }),
    changeEvent({ status: "sent", actor: "system", message: "sent to the agent" }),
    ...["received", "check", "backup", "write", "test", "reload", "verify"].map((step) =>
      changeEvent({ step, step_status: "ok" }),
    ),
    changeEvent({ status: "verified", step: "outcome", step_status: "verified", message: "applied and live" }),
  ];
}

export function changeDetail(overrides: Partial<ChangeDetail> = {}): ChangeDetail {
  return { ...change(), events: [changeEvent({ status: "proposed", actor: "olga", message: "proposed" })], ...overrides };
}

export function rollout(overrides: Partial<Rollout> = {}): Rollout {
  return {
    id: 3,
    rule: "C-gzip",
    labels: { env: ["prod"] },
    status: "running",
    stop_reason: null,
    canary: 1,
    batch_size: 2,
    auto_rollback: null,
    comment: "",
    created_by: "olga",
    created_at: "2026-11-21T10:00:00Z",
    finished_at: null,
    hosts: [
      { host_id: 7, hostname: "edge-7", wave: 0, change_id: 5, status: "verified" },
      { host_id: 8, hostname: "edge-8", wave: 1, change_id: 6, status: "approved" },
      { host_id: 9, hostname: "edge-9", wave: 1, change_id: 7, status: "approved" },
      {
        host_id: 10,
        hostname: "edge-10",
        wave: null,
        change_id: null,
        status: "skipped",
        reason: "read-only: its agent does not allow applying changes",
      },
    ],
    ...overrides,
  };
}
