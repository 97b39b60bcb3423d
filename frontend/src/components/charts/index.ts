export { TimeSeriesChart } from "./TimeSeriesChart";
export type { TimeSeriesChartProps } from "./TimeSeriesChart";
export type { ChartRow, ChartSeries } from "./types";
