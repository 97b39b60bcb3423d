/** Words for the samples a host's agent reported lost (gap records of its series). */
import type { SampleGap } from "../../../api/types";
import { formatCount, formatDateTime } from "../../../lib/format";

const REASONS: Record<string, string> = {
  spool_overflow: "agent spool overflow",
};

/** "agent spool overflow: 7 samples lost between 2026-11-23 08:01:02 and 2026-11-23 08:02:10" */
export function describeGap(gap: SampleGap): string {
  const reason = REASONS[gap.reason] ?? `agent dropped samples (${gap.reason})`;
  const count = `${formatCount(gap.samples_lost)} sample${gap.samples_lost === 1 ? "" : "s"}`;
  return `${reason}: ${count} lost between ${formatDateTime(gap.from_ts)} and ${formatDateTime(gap.to_ts)}`;
}
