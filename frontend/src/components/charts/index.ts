export { TimeSeriesChart } from "./TimeSeriesChart";
export type { TimeSeriesChartProps } from "./TimeSeriesChart";
export type { ChartMarker, ChartRow, ChartSeries } from "./types";
