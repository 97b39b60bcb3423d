import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestApiServer, startApiServer } from "../../../test/api-server";
import { fleetHost, fleetPage, hostDetail, user } from "../../../test/factories";
import { renderApp } from "../../../test/render-app";
import { proposal } from "../../changes/test/factories";
import { NGINX_CONF, analysis, finding, hostConfig } from "../../config/test/factories";
import { emptyFigures, hostAccessLog, lacksField, noMissing } from "../test/factories";

const L_FIELDS_KEY = "L-fields@/etc/nginx/nginx.conf:http/access_log";
const lFields = finding({
  id: 5,
  key: L_FIELDS_KEY,
  rule: "L-fields",
  severity: "info",
  category: "logging",
  line: 6,
  place: "http",
  directive: "log_format",
  message: "log format combined has no $request_time: latency percentiles cannot be computed from the access log",
  evidence: { log_format: "combined", builtin: true },
  fix: { action: "add", directive: "log_format", args: ["timed", "..."], file: NGINX_CONF, line: 6, context: "http" },
});
const TIMED_DIFF = [
  `--- a${NGINX_CONF}`,
  `+++ b${NGINX_CONF}`,
  "@@ -5,3 +5,4 @@",
  " http {",
  "+    log_format timed '$remote_addr [$time_local] \"$request\" $status rt=$request_time';",
  "     gzip off;",
  " }",
  "",
].join("\n");

let server: TestApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer" }) });
  server.reply("GET", "/api/v1/hosts/7", { status: 200, body: hostDetail({ id: 7, hostname: "edge-7" }) });
  server.reply("GET", "/api/v1/hosts/7/access-log", { status: 200, body: hostAccessLog() });
  server.reply("GET", "/api/v1/hosts/7/config", { status: 200, body: hostConfig({ analysis: analysis([lFields]) }) });
  server.reply("GET", "/api/v1/acks", { status: 200, body: [] });
  server.reply("POST", "/api/v1/hosts/7/changes/preview", {
    status: 200,
    body: proposal({ keys: [L_FIELDS_KEY], resolved: [L_FIELDS_KEY], diff: TIMED_DIFF }),
  });
});

function accessLogRequests(): string[] {
  return server.requests.filter((r) => r.url.startsWith("/api/v1/hosts/7/access-log")).map((r) => r.url);
}

describe("traffic tab", () => {
  it("shows the range's totals with the hit ratio defined, and the upstreams", async () => {
    renderApp("/hosts/7/traffic?range=6h", server.origin);
    const totals = await screen.findByLabelText("totals over the range");
    expect(within(totals).getByLabelText("hit ratio")).toHaveTextContent("80.0%");
    expect(within(totals).getByLabelText("hit ratio")).toHaveAttribute(
      "title",
      "(HIT + STALE + UPDATING + REVALIDATED) / requests with a cache status",
    );
    expect(within(totals).getByLabelText("p95")).toHaveTextContent("31 ms");
    expect(within(totals).getByLabelText("5xx share")).toHaveTextContent("2.0%");
    const upstreams = screen.getByRole("table", { name: "upstreams" });
    const row = within(upstreams).getByRole("row", { name: /10\.0\.0\.7:8080/ });
    expect(row).toHaveTextContent("6.7%");
    expect(row).toHaveTextContent("30 ms");
    const hitChart = screen.getByRole("figure", { name: "Cache hit ratio" });
    expect(hitChart).toHaveTextContent("(HIT + STALE + UPDATING + REVALIDATED) / requests with a cache status");
    expect(accessLogRequests()).toEqual(["/api/v1/hosts/7/access-log?range=6h"]);
  });

  it("asks for the chosen site and keeps it in the URL", async () => {
    const { router } = renderApp("/hosts/7/traffic", server.origin);
    const picker = await screen.findByRole("combobox", { name: "Site" });
    // The picker is there at once; the sites come with the figures.
    await within(picker).findByRole("option", { name: "shop.example.com (150 requests)" });
    expect(within(picker).getAllByRole("option").map((o) => o.textContent)).toEqual([
      "All sites",
      "shop.example.com (150 requests)",
      "api.example.com (50 requests)",
    ]);
    await userEvent.selectOptions(picker, "api.example.com");
    expect(router.state.location.search).toBe("?site=api.example.com");
    await waitFor(() =>
      expect(accessLogRequests()).toContain("/api/v1/hosts/7/access-log?range=1h&site=api.example.com"),
    );
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Site" }), "");
    expect(router.state.location.search).toBe("");
  });

  it("explains a format without $request_time with its L-fields finding and recommended diff", async () => {
    server.reply("GET", "/api/v1/hosts/7/access-log", {
      status: 200,
      body: hostAccessLog({
        totals: emptyFigures({ requests: 10, req_per_s: 1 }),
        missing: noMissing({
          latency: lacksField("$request_time", { finding_key: L_FIELDS_KEY }),
          upstream_latency: lacksField("$upstream_response_time", { finding_key: L_FIELDS_KEY }),
          hit_ratio: lacksField("$upstream_cache_status", {
            rule: "C-observable",
            finding_id: null,
            finding_key: null,
          }),
        }),
      }),
    });
    renderApp("/hosts/7/traffic", server.origin);
    const banner = await screen.findByRole("region", {
      name: "why request time and upstream response time are missing",
    });
    expect(banner).toHaveTextContent(
      "Request time and upstream response time: not measured. " +
        "The log format combined does not record $request_time or $upstream_response_time.",
    );
    const found = await within(banner).findByRole("group", { name: "finding L-fields" });
    expect(found).toHaveTextContent("log format combined has no $request_time");
    expect(within(found).getByRole("link", { name: "Open L-fields in the Config tab" })).toHaveAttribute(
      "href",
      `/hosts/7/config?finding=${encodeURIComponent(L_FIELDS_KEY)}`,
    );

    await userEvent.click(within(found).getByRole("button", { name: "Show the recommended change" }));
    const panel = await within(found).findByRole("region", { name: "recommended change" });
    expect(await within(panel).findByLabelText("added line 6")).toHaveTextContent("log_format timed");
    // A viewer on a read-only host: nothing to propose, and the reason is the host.
    expect(panel).toHaveTextContent("does not allow apply");
    const previews = server.requests
      .filter((r) => r.method === "POST" && r.url === "/api/v1/hosts/7/changes/preview")
      .map((r) => JSON.parse(r.body) as unknown);
    expect(previews).toEqual([{ finding_keys: [L_FIELDS_KEY], overrides: {} }]);

    const cache = screen.getByRole("region", { name: "why cache hit ratio is missing" });
    expect(cache).toHaveClass("banner-info");
    expect(cache).toHaveTextContent("no C-observable finding");
    expect(screen.getByLabelText("p95")).toHaveAttribute(
      "title",
      "Not measured: the log format combined lacks $request_time",
    );
  });

  it("shows the redacted line that did not match and the format it was matched against", async () => {
    const sample = '127.0.0.x - - [25/Nov/2026:10:00:00 +0000] "GET /… HTTP/1.1" 200';
    const noMatch = {
      reason: "lines_do_not_match" as const,
      message: "No line matches.",
      path: "/var/log/nginx/access.log",
      sample_line: sample,
      sample_format: "main",
    };
    server.reply("GET", "/api/v1/hosts/7/access-log", {
      status: 200,
      body: hostAccessLog({
        missing: noMissing({ hit_ratio: noMatch, latency: noMatch, status: noMatch, upstream_latency: noMatch }),
      }),
    });
    renderApp("/hosts/7/traffic", server.origin);
    const banner = await screen.findByRole("region", {
      name: "why cache hit ratio, request time, upstream response time and status codes are missing",
    });
    expect(banner).toHaveTextContent("No line of /var/log/nginx/access.log matches its log format main.");
    expect(within(banner).getByLabelText("unmatched line")).toHaveTextContent(sample);
  });
});

describe("fleet access-log columns", () => {
  it("shows measured figures as links to the Traffic tab and a dash with its reason otherwise", async () => {
    server.reply("GET", "/api/v1/fleet/labels", { status: 200, body: {} });
    server.reply("GET", "/api/v1/fleet", {
      status: 200,
      body: fleetPage([
        fleetHost({ id: 7, hostname: "edge-7", cache_hit_ratio: 0.873, request_time_p95_s: 0.0123, share_5xx: 0.0004 }),
        fleetHost({ id: 8, hostname: "edge-8" }),
      ]),
    });
    renderApp("/", server.origin);
    const hit = await screen.findByRole("link", { name: "cache hit ratio of edge-7: 87.3%" });
    expect(hit).toHaveAttribute("href", "/hosts/7/traffic");
    expect(screen.getByRole("link", { name: "p95 request time of edge-7: 12.3 ms" })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "5xx share of edge-7: 0.04%" })).toBeInTheDocument();
    const dash = screen.getByLabelText("p95 request time of edge-8: not measured");
    expect(dash).toHaveTextContent("—");
    expect(dash.getAttribute("title")).toMatch(/^Not measured over the last 15 minutes/);
  });
});
