/** What Prometheus needs to scrape this server: the /metrics URL and a scrape_config using the token. */

export const METRICS_PATH = "/metrics";

/** The /metrics address of the server at `origin` (e.g. "https://fleet.example.org"). */
export function metricsUrl(origin: string): string {
  return `${origin.replace(/\/+$/, "")}${METRICS_PATH}`;
}

/** A scrape_configs entry for prometheus.yml; the token goes in `authorization.credentials` (type Bearer). */
export function scrapeConfig(origin: string, token: string): string {
  const url = new URL(origin);
  return [
    "scrape_configs:",
    "  - job_name: nginx-fleet",
    `    scheme: ${url.protocol.replace(":", "")}`,
    `    metrics_path: ${METRICS_PATH}`,
    "    authorization:",
    `      credentials: ${token}`,
    "    static_configs:",
    `      - targets: ["${url.host}"]`,
    "",
  ].join("\n");
}
