/** Builders of config-analysis API objects for tests. */
import type { ConfigAnalysis, Finding, HostConfig } from "../api/types";

export const NGINX_CONF = "/etc/nginx/nginx.conf";

export const NGINX_CONF_TEXT = [
  "worker_processes auto;",
  "events {",
  "    worker_connections 768;",
  "}",
  "http {",
  "    gzip off;",
  "}",
  "",
].join("\n");

export function finding(overrides: Partial<Finding> = {}): Finding {
  const rule = overrides.rule ?? "W-connections";
  const file = overrides.file ?? NGINX_CONF;
  const line = overrides.line ?? 3;
  const place = overrides.place ?? "events";
  const directive = overrides.directive ?? "worker_connections";
  return {
    id: 1,
    key: `${rule}@${file}:${place}/${directive}`,
    rule,
    severity: "warning",
    category: "workers",
    file,
    line,
    place,
    directive,
    message: "worker_connections 768 on a host with 2 CPUs; raise worker_connections to 4096",
    evidence: { worker_connections: 768, cpu_count: 2 },
    fix: {
      action: "set",
      directive: "worker_connections",
      args: ["4096"],
      file,
      line,
      context: "events",
      note: "each connection needs a file descriptor",
    },
    doc_url: "https://nginx.org/en/docs/ngx_core_module.html#worker_connections",
    muted: false,
    ack_id: null,
    ...overrides,
  };
}

export function analysis(findings: Finding[], overrides: Partial<ConfigAnalysis> = {}): ConfigAnalysis {
  return {
    id: 1,
    analyzed_at: "2026-11-21T10:00:00Z",
    status: "ok",
    score: 81,
    categories: { workers: 90, compression: 90 },
    counts: { error: 0, warning: findings.filter((f) => !f.muted).length, info: 0 },
    error: null,
    findings,
    ...overrides,
  };
}

export function hostConfig(overrides: Partial<HostConfig> = {}): HostConfig {
  return {
    host_id: 7,
    snapshot: { id: 1, hash: "abc", received_at: "2026-11-21T09:59:00Z" },
    files: [
      { path: NGINX_CONF, text: NGINX_CONF_TEXT, line_count: 7 },
      { path: "/etc/nginx/mime.types", text: "types {\n    text/html html;\n}\n", line_count: 3 },
    ],
    analysis: analysis([
      finding(),
      finding({ id: 2, rule: "C-gzip", severity: "info", category: "compression", line: 6, message: "gzip is off" }),
    ]),
    ...overrides,
  };
}
