/** The host's metric charts for one time range. */
import { useMemo } from "react";
import type { Series } from "../../../api/types";
import { type ChartBand, type ChartMarker, type ChartSeries, TimeSeriesChart } from "../../../components/charts";
import { formatCompact, formatPercent, formatRate } from "../../../lib/format";
import { toChartRows } from "../utils/chart-rows";

const CONNECTIONS: ChartSeries[] = [
  { key: "reading", label: "Reading", color: "#2f6fdb", kind: "stacked-area" },
  { key: "writing", label: "Writing", color: "#d9822b", kind: "stacked-area" },
  { key: "waiting", label: "Waiting (idle keepalive)", color: "#8a8f98", kind: "stacked-area" },
];
const REQUESTS: ChartSeries[] = [{ key: "req_per_s", label: "Requests/s", color: "#2f6fdb", kind: "line" }];
const DROPS: ChartSeries[] = [{ key: "drops_per_s", label: "Dropped connections/s", color: "#c0392b", kind: "line" }];
const SYSTEM: ChartSeries[] = [
  { key: "cpu_pct", label: "CPU %", color: "#7b4fd6", kind: "line" },
  { key: "mem_pct", label: "Memory used %", color: "#1e8e5a", kind: "line" },
];
const FDS: ChartSeries[] = [
  { key: "fds_open", label: "Open fds (nginx)", color: "#2f6fdb", kind: "line" },
  { key: "fds_limit", label: "Limit", color: "#c0392b", kind: "line", dashed: true },
];

const NO_MARKERS: readonly ChartMarker[] = [];
const NO_BANDS: readonly ChartBand[] = [];

/**
 * `markers`: the host's applied changes in this range, drawn as vertical lines on every chart;
 * `bands`: the times its alerts fired, shaded by severity behind every chart.
 */
export default function HostCharts({
  series,
  markers = NO_MARKERS,
  bands = NO_BANDS,
}: {
  series: Series;
  markers?: readonly ChartMarker[];
  bands?: readonly ChartBand[];
}) {
  const rows = useMemo(() => toChartRows(series.points, series.step_s), [series]);
  const domain = useMemo(
    () => [Date.parse(series.from), Date.parse(series.to)] as const,
    [series.from, series.to],
  );
  return (
    <div className="chart-grid">
      <TimeSeriesChart
        title="Active connections = Reading + Writing + Waiting"
        rows={rows}
        series={CONNECTIONS}
        domain={domain}
        formatValue={formatCompact}
        stackTotalLabel="Active"
        markers={markers}
        bands={bands}
      />
      <TimeSeriesChart
        title="Requests per second"
        rows={rows}
        series={REQUESTS}
        domain={domain}
        formatValue={formatRate}
        markers={markers}
        bands={bands}
      />
      <TimeSeriesChart
        title="Dropped connections per second (accepts − handled)"
        rows={rows}
        series={DROPS}
        domain={domain}
        formatValue={formatRate}
        zeroLine
        markers={markers}
        bands={bands}
      />
      <TimeSeriesChart
        title="CPU and memory"
        rows={rows}
        series={SYSTEM}
        domain={domain}
        formatValue={(v) => formatPercent(v, 0)}
        markers={markers}
        bands={bands}
      />
      <TimeSeriesChart
        title="Open file descriptors vs limit"
        rows={rows}
        series={FDS}
        domain={domain}
        formatValue={formatCompact}
        markers={markers}
        bands={bands}
      />
    </div>
  );
}
