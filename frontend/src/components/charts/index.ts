export { TimeSeriesChart } from "./TimeSeriesChart";
export type { TimeSeriesChartProps } from "./TimeSeriesChart";
export type { ChartBand, ChartMarker, ChartRow, ChartSeries } from "./types";
