/** Notices beside the charts for samples the agent reported lost, so a hole has its reason. */
import type { SampleGap } from "../../../api/types";
import { describeGap } from "../utils/gaps";

export function SampleGapNotices({ gaps }: { gaps: SampleGap[] }) {
  if (gaps.length === 0) return null;
  return (
    <div className="banner banner-warning" role="status" aria-label="samples lost by the agent">
      {gaps.map((gap) => (
        <p key={`${gap.from_seq}-${gap.to_seq}`} className="gap-notice">
          {describeGap(gap)}
        </p>
      ))}
    </div>
  );
}
