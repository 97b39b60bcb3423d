/** Builders of access-log API objects for tests; override only what a test is about. */
import type {
  AccessLogFigures,
  AccessLogFile,
  AccessLogPoint,
  HostAccessLog,
  MissingFigure,
  MissingFigures,
} from "../api/types";

/** Every figure absent, as for a host whose logs gave nothing. */
export function emptyFigures(overrides: Partial<AccessLogFigures> = {}): AccessLogFigures {
  return {
    requests: null,
    req_per_s: null,
    status_1xx: null,
    status_2xx: null,
    status_3xx: null,
    status_4xx: null,
    status_5xx: null,
    status_499: null,
    status_500: null,
    status_502: null,
    status_503: null,
    status_504: null,
    share_5xx: null,
    share_499: null,
    bytes_sent: null,
    get_2xx: null,
    cache_hit: null,
    cache_miss: null,
    cache_expired: null,
    cache_stale: null,
    cache_updating: null,
    cache_revalidated: null,
    cache_bypass: null,
    hit_ratio: null,
    upstream_errors: null,
    request_time_p50_s: null,
    request_time_p90_s: null,
    request_time_p95_s: null,
    request_time_p99_s: null,
    upstream_time_p50_s: null,
    upstream_time_p90_s: null,
    upstream_time_p95_s: null,
    upstream_time_p99_s: null,
    ...overrides,
  };
}

/** A caching proxy's 10 s: 100 requests, 80 served from the cache, 2 answered 502, 1 closed. */
export function figures(overrides: Partial<AccessLogFigures> = {}): AccessLogFigures {
  return emptyFigures({
    requests: 100,
    req_per_s: 10,
    status_1xx: 0,
    status_2xx: 90,
    status_3xx: 5,
    status_4xx: 3,
    status_5xx: 2,
    status_499: 1,
    status_500: 0,
    status_502: 2,
    status_503: 0,
    status_504: 0,
    share_5xx: 0.02,
    share_499: 0.01,
    bytes_sent: 123_456,
    get_2xx: 88,
    cache_hit: 70,
    cache_miss: 15,
    cache_expired: 5,
    cache_stale: 5,
    cache_updating: 3,
    cache_revalidated: 2,
    cache_bypass: 0,
    hit_ratio: 0.8,
    upstream_errors: 2,
    request_time_p50_s: 0.002,
    request_time_p90_s: 0.015,
    request_time_p95_s: 0.031,
    request_time_p99_s: 0.12,
    upstream_time_p50_s: 0.01,
    upstream_time_p90_s: 0.02,
    upstream_time_p95_s: 0.03,
    upstream_time_p99_s: 0.1,
    ...overrides,
  });
}

export function point(ts: string, overrides: Partial<AccessLogFigures> = {}): AccessLogPoint {
  return { ts, ...figures(overrides) };
}

export function noMissing(overrides: Partial<MissingFigures> = {}): MissingFigures {
  return { hit_ratio: null, latency: null, upstream_latency: null, status: null, ...overrides };
}

export function lacksField(variable: string, overrides: Partial<MissingFigure> = {}): MissingFigure {
  return {
    reason: "format_lacks_field",
    message: `The log format combined lacks ${variable}, so it cannot be measured.`,
    variable,
    formats: ["combined"],
    rule: "L-fields",
    finding_id: 5,
    finding_key: "L-fields@/etc/nginx/nginx.conf:http/access_log",
    ...overrides,
  };
}

export function logFile(overrides: Partial<AccessLogFile> = {}): AccessLogFile {
  return {
    path: "/var/log/nginx/access.log",
    formats: ["main"],
    state: "ok",
    reason: null,
    lines: 100,
    unparsed: 0,
    unparsed_sample: null,
    unparsed_format: null,
    missing_fields: [],
    site_field: "host",
    conditional: false,
    ...overrides,
  };
}

export function hostAccessLog(overrides: Partial<HostAccessLog> = {}): HostAccessLog {
  return {
    host_id: 7,
    start: "2026-11-21T09:00:00Z",
    end: "2026-11-21T10:00:00Z",
    step_s: 10,
    site: null,
    points: [point("2026-11-21T09:59:40Z"), point("2026-11-21T09:59:50Z")],
    totals: figures({ requests: 200 }),
    upstreams: [
      {
        upstream: "10.0.0.7:8080",
        attempts: 30,
        errors: 2,
        error_share: 2 / 30,
        response_time_p50_s: 0.01,
        response_time_p95_s: 0.03,
        response_time_p99_s: 0.1,
      },
    ],
    sites: [
      { site: "shop.example.com", requests: 150 },
      { site: "api.example.com", requests: 50 },
    ],
    files: [logFile()],
    files_reported_at: "2026-11-21T09:59:50Z",
    missing: noMissing(),
    top_paths: null,
    ...overrides,
  };
}
