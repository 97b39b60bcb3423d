/** A host's alert periods as bands on its charts, so what fired shows next to the figures. */
import type { ChartBand } from "../../../components/charts";
import { formatDateTime } from "../../../lib/format";
import type { AlertPeriod, Severity } from "../api/types";

export const SEVERITY_COLORS: Record<Severity, string> = {
  critical: "#c5221f",
  warning: "#c77c02",
  info: "#1f5fbf",
};

/** A band that knows its incident, for the list of alerts under the charts. */
export interface AlertBand extends ChartBand {
  incidentId: number;
  ruleName: string;
  severity: Severity;
  /** Still firing at the end of the range. */
  open: boolean;
}

/**
 * Each period overlapping [fromMs, toMs], oldest first; a period still firing (`end` null)
 * reaches the end of the range. The chart clips each band to its own window.
 */
export function alertBands(periods: readonly AlertPeriod[], fromMs: number, toMs: number): AlertBand[] {
  return periods
    .map((period) => {
      const start = Date.parse(period.start);
      const end = period.end === null ? toMs : Date.parse(period.end);
      return { period, start, end };
    })
    .filter(({ start, end }) => Number.isFinite(start) && Number.isFinite(end) && end >= fromMs && start <= toMs)
    .sort((a, b) => a.start - b.start)
    .map(({ period, start, end }) => ({
      from: start,
      to: end,
      color: SEVERITY_COLORS[period.severity] ?? SEVERITY_COLORS.info,
      title:
        `${period.rule_name} (${period.severity}): ${formatDateTime(start)} – ` +
        (period.end === null ? "still firing" : formatDateTime(end)),
      incidentId: period.incident_id,
      ruleName: period.rule_name,
      severity: period.severity,
      open: period.end === null,
    }));
}
