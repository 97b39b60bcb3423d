/** A time-series panel (lines and stacked areas) with a title, legend and empty state. */
import type { ReactNode } from "react";
import {
  Area,
  CartesianGrid,
  ComposedChart,
  Line,
  ReferenceArea,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { formatAxisTime, formatDateTime } from "../../lib/format";
import { clipBands } from "./bands";
import { timeTicks } from "./time-ticks";
import type { ChartBand, ChartMarker, ChartRow, ChartSeries } from "./types";

export interface TimeSeriesChartProps {
  title: string;
  /** A short line under the title: how the figure is defined. */
  description?: string;
  /** Said instead of "No data in this range" when the caller knows why there is none. */
  emptyMessage?: ReactNode;
  rows: readonly ChartRow[];
  series: readonly ChartSeries[];
  /** Visible time window in ms; fixed so that gaps at either end stay visible. */
  domain: readonly [number, number];
  formatValue: (value: number) => string;
  /** Value axis labels, when shorter than the tooltip's (e.g. "25%" for "25.0%"). */
  formatTick?: (value: number) => string;
  /** Draw y = 0 so that "nothing happened" reads as a flat line, not a missing chart. */
  zeroLine?: boolean;
  /** Extra line in the tooltip summing the stacked series (e.g. Active). */
  stackTotalLabel?: string;
  /** Fixed top of the value axis (e.g. 100 for a score); automatic when absent. */
  yMax?: number;
  /** The automatic top reaches at least this (e.g. 1% for a share that is mostly 0). */
  yMinTop?: number;
  height?: number;
  /** Vertical lines at given times, labelled (only those inside the domain are drawn). */
  markers?: readonly ChartMarker[];
  /** Shaded stretches of time behind the series (clipped to the domain), titled on hover. */
  bands?: readonly ChartBand[];
}

// Above the grid, below the series: a band shades the plot without hiding a line.
const BAND_Z_INDEX = -50;
const BAND_OPACITY = 0.14;

interface BandShapeProps {
  x?: number;
  y?: number;
  width?: number;
  height?: number;
}

/** A band's rectangle with an SVG title, which browsers show as its tooltip. */
function BandShape({ x = 0, y = 0, width = 0, height = 0, band }: BandShapeProps & { band: ChartBand }) {
  return (
    <g className="chart-band">
      <title>{band.title}</title>
      <rect x={x} y={y} width={Math.max(width, 2)} height={height} fill={band.color} fillOpacity={BAND_OPACITY} />
    </g>
  );
}

/** The legend in series order (stack order bottom to top), as plain HTML under the plot. */
function ChartLegend({ series }: { series: readonly ChartSeries[] }) {
  return (
    <ul className="chart-legend" aria-label="legend">
      {series.map((s) => (
        <li key={s.key}>
          <span
            className={s.dashed ? "legend-swatch legend-swatch-dashed" : "legend-swatch"}
            style={{ borderColor: s.color }}
            aria-hidden="true"
          />
          {s.label}
        </li>
      ))}
    </ul>
  );
}

function hasData(rows: readonly ChartRow[], series: readonly ChartSeries[]): boolean {
  return rows.some((row) => series.some((s) => typeof row[s.key] === "number"));
}

/** Render one chart panel, or its "no data in this range" state. */
export function TimeSeriesChart({
  title,
  description,
  emptyMessage = "No data in this range",
  rows,
  series,
  domain,
  formatValue,
  formatTick = formatValue,
  zeroLine = false,
  stackTotalLabel,
  yMax,
  yMinTop,
  height = 220,
  markers = [],
  bands = [],
}: TimeSeriesChartProps) {
  const span = domain[1] - domain[0];
  const stackedKeys = series.filter((s) => s.kind === "stacked-area").map((s) => s.key);
  return (
    <figure className="chart-panel" aria-label={title}>
      <figcaption className="chart-title">
        {title}
        {description ? <span className="chart-description">{description}</span> : null}
      </figcaption>
      {hasData(rows, series) ? (
        <ResponsiveContainer width="100%" height={height}>
          <ComposedChart data={[...rows]} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
            <CartesianGrid stroke="var(--grid)" vertical={false} />
            {clipBands(bands, domain).map((band) => (
              <ReferenceArea
                key={`${band.from}-${band.title}`}
                x1={band.from}
                x2={band.to}
                ifOverflow="hidden"
                zIndex={BAND_Z_INDEX}
                shape={(props: BandShapeProps) => <BandShape {...props} band={band} />}
              />
            ))}
            <XAxis
              dataKey="t"
              type="number"
              scale="time"
              domain={[domain[0], domain[1]]}
              allowDataOverflow
              ticks={timeTicks(domain[0], domain[1])}
              tickFormatter={(ms: number) => formatAxisTime(ms, span)}
              stroke="var(--muted)"
              fontSize={11}
            />
            <YAxis
              tickFormatter={(v: number) => formatTick(v)}
              stroke="var(--muted)"
              fontSize={11}
              width={64}
              domain={[
                0,
                yMax ?? (yMinTop === undefined ? "auto" : (dataMax: number) => Math.max(dataMax, yMinTop)),
              ]}
            />
            <Tooltip
              labelFormatter={(ms) => formatDateTime(Number(ms))}
              formatter={(value, name) => [
                typeof value === "number" ? formatValue(value) : "—",
                String(name),
              ]}
              content={
                stackTotalLabel
                  ? ({ active, payload, label }) =>
                      active && payload && payload.length > 0 ? (
                        <div className="chart-tooltip">
                          <div className="chart-tooltip-time">{formatDateTime(Number(label))}</div>
                          <div>
                            <strong>
                              {stackTotalLabel}:{" "}
                              {formatValue(
                                stackedKeys.reduce((sum, key) => {
                                  const row = payload[0]?.payload as ChartRow | undefined;
                                  const v = row?.[key];
                                  return sum + (typeof v === "number" ? v : 0);
                                }, 0),
                              )}
                            </strong>
                          </div>
                          {payload.map((entry) => (
                            <div key={String(entry.dataKey)} style={{ color: entry.color }}>
                              {entry.name}:{" "}
                              {typeof entry.value === "number" ? formatValue(entry.value) : "—"}
                            </div>
                          ))}
                        </div>
                      ) : null
                  : undefined
              }
            />
            {zeroLine ? <ReferenceLine y={0} stroke="var(--muted)" strokeWidth={1} /> : null}
            {markers
              .filter((m) => m.t >= domain[0] && m.t <= domain[1])
              .map((m) => (
                <ReferenceLine
                  key={`${m.t}-${m.label}`}
                  x={m.t}
                  stroke={m.color}
                  strokeDasharray="4 3"
                  strokeWidth={1.5}
                  // The label goes on the side with more room, so a recent change's is not cut off.
                  label={{
                    value: m.label,
                    position: m.t > (domain[0] + domain[1]) / 2 ? "insideTopRight" : "insideTopLeft",
                    fontSize: 10,
                    fill: m.color,
                  }}
                />
              ))}
            {series.map((s) =>
              s.kind === "stacked-area" ? (
                <Area
                  key={s.key}
                  dataKey={s.key}
                  name={s.label}
                  stackId="stack"
                  type="monotone"
                  stroke={s.color}
                  fill={s.color}
                  fillOpacity={0.35}
                  isAnimationActive={false}
                />
              ) : (
                <Line
                  key={s.key}
                  dataKey={s.key}
                  name={s.label}
                  type={s.kind === "step" ? "stepAfter" : "monotone"}
                  stroke={s.color}
                  strokeWidth={1.5}
                  strokeDasharray={s.dashed ? "6 4" : undefined}
                  dot={false}
                  isAnimationActive={false}
                />
              ),
            )}
          </ComposedChart>
        </ResponsiveContainer>
      ) : (
        <p className="chart-empty" style={{ height }}>
          {emptyMessage}
        </p>
      )}
      <ChartLegend series={series} />
    </figure>
  );
}
