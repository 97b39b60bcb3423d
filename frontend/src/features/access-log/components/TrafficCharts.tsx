/** A host's access-log charts: hit ratio, latency percentiles, status codes and cache statuses. */
import { useMemo } from "react";
import { type ChartSeries, TimeSeriesChart } from "../../../components/charts";
import { formatLatency, formatRate, formatRatio } from "../../../lib/format";
import type { Figure, HostAccessLog, MissingFigures } from "../api/types";
import { HIT_RATIO_DEFINITION } from "../utils/definitions";
import { whyEmpty } from "../utils/missing";
import { UPSTREAM_LATENCY_KEYS, hasValues, toTrafficRows } from "../utils/traffic-rows";

const HIT_RATIO: ChartSeries[] = [{ key: "hit_ratio", label: "Hit ratio", color: "#1e8e5a", kind: "line" }];
const LATENCY: ChartSeries[] = [
  { key: "rt_p50", label: "p50", color: "#2f6fdb", kind: "line" },
  { key: "rt_p90", label: "p90", color: "#7b4fd6", kind: "line" },
  { key: "rt_p95", label: "p95", color: "#d9822b", kind: "line" },
  { key: "rt_p99", label: "p99", color: "#c0392b", kind: "line" },
];
const UPSTREAM_LATENCY: ChartSeries[] = [
  { key: "ut_p50", label: "p50", color: "#2f6fdb", kind: "line", dashed: true },
  { key: "ut_p90", label: "p90", color: "#7b4fd6", kind: "line", dashed: true },
  { key: "ut_p95", label: "p95", color: "#d9822b", kind: "line", dashed: true },
  { key: "ut_p99", label: "p99", color: "#c0392b", kind: "line", dashed: true },
];
// Bottom to top: the codes to watch on the axis, where a thin band still shows, and 2xx on top,
// so that the top edge of the stack (drawn in the top series' colour) is not read as errors.
const STATUS: ChartSeries[] = [
  { key: "s_500", label: "500", color: "#c0392b", kind: "stacked-area" },
  { key: "s_502", label: "502", color: "#8e2a1f", kind: "stacked-area" },
  { key: "s_503", label: "503", color: "#a93d8c", kind: "stacked-area" },
  { key: "s_504", label: "504", color: "#5b2c6f", kind: "stacked-area" },
  { key: "s_5xx_other", label: "5xx (other)", color: "#e06666", kind: "stacked-area" },
  { key: "s_499", label: "499 (client closed)", color: "#d9822b", kind: "stacked-area" },
  { key: "s_4xx_other", label: "4xx (other)", color: "#d9b02b", kind: "stacked-area" },
  { key: "s_1xx", label: "1xx", color: "#8a8f98", kind: "stacked-area" },
  { key: "s_3xx", label: "3xx", color: "#2f6fdb", kind: "stacked-area" },
  { key: "s_2xx", label: "2xx", color: "#1e8e5a", kind: "stacked-area" },
];
const ERROR_SHARES: ChartSeries[] = [
  { key: "share_5xx", label: "5xx share", color: "#c0392b", kind: "line" },
  { key: "share_499", label: "499 share", color: "#d9822b", kind: "line" },
];
// Served from the cache (greens) below, from the upstream (oranges, grey) above.
const CACHE: ChartSeries[] = [
  { key: "c_hit", label: "HIT", color: "#1e8e5a", kind: "stacked-area" },
  { key: "c_stale", label: "STALE", color: "#57b87f", kind: "stacked-area" },
  { key: "c_updating", label: "UPDATING", color: "#8fd1a8", kind: "stacked-area" },
  { key: "c_revalidated", label: "REVALIDATED", color: "#2f9c9c", kind: "stacked-area" },
  { key: "c_miss", label: "MISS", color: "#d9822b", kind: "stacked-area" },
  { key: "c_expired", label: "EXPIRED", color: "#e0a458", kind: "stacked-area" },
  { key: "c_bypass", label: "BYPASS", color: "#8a8f98", kind: "stacked-area" },
];

const ratioTick = (value: number) => formatRatio(value, 0);
// Axes of values that are often all 0 (no 5xx; static files served in 0.000 s) reach at least
// this far, rather than Recharts' 0–4 of nothing.
const MIN_SHARE_TOP = 0.01;
const MIN_LATENCY_TOP_S = 0.01;

/** The empty state of a chart whose figure the API says is missing, else the default one. */
function emptyFor(missing: MissingFigures, figure: Figure): string | undefined {
  const reason = missing[figure];
  return reason ? whyEmpty(figure, reason) : undefined;
}

export default function TrafficCharts({ log }: { log: HostAccessLog }) {
  const rows = useMemo(() => toTrafficRows(log.points, log.step_s), [log.points, log.step_s]);
  const domain = useMemo(() => [Date.parse(log.start), Date.parse(log.end)] as const, [log.start, log.end]);
  const missing = log.missing;
  // Upstream time exists only for proxied traffic: a host that proxies nothing gets no chart of it.
  const showUpstream =
    hasValues(rows, UPSTREAM_LATENCY_KEYS) ||
    (missing.upstream_latency !== null &&
      missing.upstream_latency.reason !== "no_traffic" &&
      missing.upstream_latency.reason !== "not_applicable");
  return (
    <div className="chart-grid">
      <TimeSeriesChart
        title="Cache hit ratio"
        description={HIT_RATIO_DEFINITION}
        emptyMessage={emptyFor(missing, "hit_ratio")}
        rows={rows}
        series={HIT_RATIO}
        domain={domain}
        formatValue={formatRatio}
        formatTick={ratioTick}
        yMax={1}
      />
      <TimeSeriesChart
        title="Request time percentiles"
        description="$request_time: from the first byte read to the last byte sent"
        emptyMessage={emptyFor(missing, "latency")}
        rows={rows}
        series={LATENCY}
        domain={domain}
        formatValue={formatLatency}
        yMinTop={MIN_LATENCY_TOP_S}
      />
      {showUpstream ? (
        <TimeSeriesChart
          title="Upstream response time percentiles"
          description="$upstream_response_time of each proxied request, its retried attempts summed"
          emptyMessage={emptyFor(missing, "upstream_latency")}
          rows={rows}
          series={UPSTREAM_LATENCY}
          domain={domain}
          formatValue={formatLatency}
          yMinTop={MIN_LATENCY_TOP_S}
        />
      ) : null}
      <TimeSeriesChart
        title="Requests per second by status"
        description="499 and the 5xx codes split out of their classes"
        emptyMessage={emptyFor(missing, "status")}
        rows={rows}
        series={STATUS}
        domain={domain}
        formatValue={formatRate}
        stackTotalLabel="All"
      />
      <TimeSeriesChart
        title="5xx and 499 share of requests"
        emptyMessage={emptyFor(missing, "status")}
        rows={rows}
        series={ERROR_SHARES}
        domain={domain}
        formatValue={formatRatio}
        formatTick={ratioTick}
        yMinTop={MIN_SHARE_TOP}
        zeroLine
      />
      <TimeSeriesChart
        title="Cache statuses per second"
        description="requests without a cache status (-) are not counted"
        emptyMessage={emptyFor(missing, "hit_ratio")}
        rows={rows}
        series={CACHE}
        domain={domain}
        formatValue={formatRate}
        stackTotalLabel="With a cache status"
      />
    </div>
  );
}
