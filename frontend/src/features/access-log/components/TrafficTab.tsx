/** The host page's Traffic tab: access-log figures for the chosen range and site (loaded lazily, with Recharts). */
import type { TimeRange } from "../../../api/types";
import { ErrorState, Loading } from "../../../components/ui/states";
import { RangePicker } from "../../host/components/RangePicker";
import { MISSING, formatBytes, formatCount, formatLatency, formatRate, formatRatio } from "../../../lib/format";
import { useHostAccessLog } from "../api/access-log";
import type { AccessLogFigures, AccessLogSite, Figure, HostAccessLog, MissingFigures } from "../api/types";
import { HIT_RATIO_DEFINITION } from "../utils/definitions";
import { groupMissing, whyEmpty } from "../utils/missing";
import { MissingBanners } from "./MissingBanners";
import { SitePicker } from "./SitePicker";
import TrafficCharts from "./TrafficCharts";
import { FilesTable, TopPathsTable, UpstreamTable } from "./TrafficTables";
import "../access-log.css";

interface FixProps {
  hostId: number;
  /** Operators and admins may propose a recommended change. */
  canPropose: boolean;
  applyAllowed: boolean;
}

interface TrafficTabProps extends FixProps {
  range: TimeRange;
  onRangeChange: (range: TimeRange) => void;
  site: string | null;
  onSiteChange: (site: string | null) => void;
}

interface Stat {
  label: string;
  value: string;
  figure?: Figure;
  title?: string;
}

/** Why a total reads "—": the figure's reason when the API gives one. */
function titleFor(missing: MissingFigures, figure: Figure | undefined, value: string): string | undefined {
  if (value !== MISSING) return undefined;
  const reason = figure ? missing[figure] : null;
  return reason ? whyEmpty(figure as Figure, reason) : "Not measured in this range";
}

function Totals({ totals, missing }: { totals: AccessLogFigures; missing: MissingFigures }) {
  const stats: Stat[] = [
    { label: "requests", value: formatCount(totals.requests) },
    { label: "req/s", value: formatRate(totals.req_per_s) },
    { label: "hit ratio", value: formatRatio(totals.hit_ratio), figure: "hit_ratio", title: HIT_RATIO_DEFINITION },
    { label: "p50", value: formatLatency(totals.request_time_p50_s), figure: "latency" },
    { label: "p95", value: formatLatency(totals.request_time_p95_s), figure: "latency" },
    { label: "p99", value: formatLatency(totals.request_time_p99_s), figure: "latency" },
    { label: "5xx share", value: formatRatio(totals.share_5xx), figure: "status" },
    { label: "499 share", value: formatRatio(totals.share_499), figure: "status" },
    { label: "sent", value: formatBytes(totals.bytes_sent) },
  ];
  return (
    <dl className="facts traffic-totals" aria-label="totals over the range">
      {stats.map((stat) => (
        <div key={stat.label}>
          <dt>{stat.label}</dt>
          <dd aria-label={stat.label} title={titleFor(missing, stat.figure, stat.value) ?? stat.title}>
            {stat.value}
          </dd>
        </div>
      ))}
    </dl>
  );
}

const NO_SITES: AccessLogSite[] = [];

function Body({ data, hostId, canPropose, applyAllowed }: { data: HostAccessLog } & FixProps) {
  return (
    <>
      <MissingBanners
        groups={groupMissing(data.missing)}
        hostId={hostId}
        canPropose={canPropose}
        applyAllowed={applyAllowed}
      />
      <Totals totals={data.totals} missing={data.missing} />
      <TrafficCharts log={data} />
      <h2>Upstreams</h2>
      <UpstreamTable upstreams={data.upstreams} />
      <h2>Top paths</h2>
      <TopPathsTable paths={data.top_paths} />
      <h2>Access logs</h2>
      <FilesTable files={data.files} reportedAt={data.files_reported_at} />
    </>
  );
}

export default function TrafficTab({
  hostId,
  range,
  onRangeChange,
  site,
  onSiteChange,
  canPropose,
  applyAllowed,
}: TrafficTabProps) {
  const log = useHostAccessLog(hostId, range, site);
  return (
    <div className="traffic-tab">
      <div className="toolbar">
        <RangePicker value={range} onChange={onRangeChange} />
        <SitePicker sites={log.data?.sites ?? NO_SITES} value={site} onChange={onSiteChange} />
      </div>
      {log.isPending ? (
        <Loading what="Loading access-log figures" />
      ) : log.isError ? (
        <ErrorState error={log.error} title="Could not load the access-log figures" />
      ) : (
        <Body data={log.data} hostId={hostId} canPropose={canPropose} applyAllowed={applyAllowed} />
      )}
    </div>
  );
}
