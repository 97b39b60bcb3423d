/** Small builders of API objects for tests; override only what a test is about. */
import type { FleetHost, HostDetail, Series, SeriesPoint, User } from "../api/types";

/** A GET /fleet reply holding these hosts as its only page. */
export function fleetPage(items: FleetHost[], overrides: { total?: number; limit?: number; offset?: number } = {}) {
  return { items, total: items.length, limit: 50, offset: 0, ...overrides };
}

export function fleetHost(overrides: Partial<FleetHost> = {}): FleetHost {
  return {
    id: 1,
    hostname: "web-1",
    labels: { env: "prod" },
    status: "up",
    status_reason: null,
    last_seen_at: "2026-11-21T10:00:00Z",
    nginx_version: "1.22.1",
    stub_status_available: true,
    stub_status_error: null,
    req_per_s: 10,
    active: 3,
    reading: 0,
    writing: 1,
    waiting: 2,
    drops_per_s: 0,
    cpu_pct: 5,
    mem_used_pct: 40,
    fds_open: 40,
    fds_limit: 1024,
    cache_hit_ratio: null,
    request_time_p95_s: null,
    share_5xx: null,
    score: null,
    findings: null,
    ...overrides,
  };
}

export function hostDetail(overrides: Partial<HostDetail> = {}): HostDetail {
  return {
    ...fleetHost(),
    agent_id: "6f1c0000-0000-4000-8000-000000000001",
    agent_version: "0.1.0",
    enrolled_at: "2026-11-20T10:00:00Z",
    enrolment_reset_at: null,
    enrolment_reset_expires_at: null,
    facts: {},
    apply_allowed: false,
    ...overrides,
  };
}

export function seriesPoint(overrides: Partial<SeriesPoint> = {}): SeriesPoint {
  return {
    ts: "2026-11-21T10:00:00Z",
    active: 3,
    reading: 0,
    writing: 1,
    waiting: 2,
    req_per_s: 10,
    accepts_per_s: 1,
    drops_per_s: 0,
    cpu_pct: 5,
    mem_used_bytes: 1024,
    mem_total_bytes: 4096,
    load1: 0.1,
    fds_open: 40,
    fds_limit: 1024,
    workers: 2,
    ...overrides,
  };
}

export function series(points: SeriesPoint[], overrides: Partial<Series> = {}): Series {
  return {
    host_id: 1,
    from: "2026-11-21T09:45:00Z",
    to: "2026-11-21T10:00:00Z",
    step_s: 10,
    points,
    gaps: [],
    ...overrides,
  };
}

export function user(overrides: Partial<User> = {}): User {
  return {
    id: 1,
    username: "alice",
    role: "admin",
    created_at: "2026-11-20T10:00:00Z",
    disabled: false,
    ...overrides,
  };
}
