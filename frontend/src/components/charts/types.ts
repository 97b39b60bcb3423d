/** Data shapes the chart components accept (free of any Recharts type). */

/** One point in time: `t` in ms since the epoch, then one value (or null for a gap) per series. */
export type ChartRow = { t: number } & Record<string, number | null>;

export interface ChartSeries {
  key: string;
  label: string;
  color: string;
  /** "step" holds each value until the next one (a score changes only when re-analysed). */
  kind: "line" | "step" | "stacked-area";
  dashed?: boolean;
}

/** A moment to mark with a vertical line across the plot (e.g. a config change applied then). */
export interface ChartMarker {
  /** ms since the epoch */
  t: number;
  label: string;
  color: string;
}

/** A stretch of time to shade across the plot (e.g. while an alert fired), named on hover. */
export interface ChartBand {
  /** ms since the epoch */
  from: number;
  /** ms since the epoch */
  to: number;
  /** Said by the band's tooltip (e.g. "Dropped connections (critical), 10:04 – 10:12"). */
  title: string;
  color: string;
}
