/** Host page (/hosts/:id and /hosts/:id/config): header, labels, then the Metrics or Config tab. */
import { Suspense, lazy } from "react";
import { Link, NavLink, useParams, useSearchParams } from "react-router";
import type { TimeRange } from "../../../api/types";
import { StatusBadge } from "../../../components/ui/StatusBadge";
import { ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime, formatRelativeTime } from "../../../lib/format";
import { hasRole } from "../../../lib/roles";
import { useNow } from "../../../lib/use-now";
import { useMe } from "../../auth/api/auth";
import { LIVE_RANGES } from "../../fleet/api/live-cache";
import { LiveIndicator } from "../../fleet/components/LiveIndicator";
import { useHost, useHostSeries } from "../api/host";
import { HostBanners } from "./HostBanners";
import { LabelEditor } from "./LabelEditor";
import { RangePicker, parseRange } from "./RangePicker";
import { ResetEnrolment } from "./ResetEnrolment";
import { SampleGapNotices } from "./SampleGapNotices";
import { ScoreHistory } from "./ScoreHistory";
import "./host-tabs.css";

// Recharts is large; it loads only when a host page is opened.
const HostCharts = lazy(() => import("./HostCharts"));
// The config view carries the syntax highlighter; it loads only when its tab is opened.
const ConfigTab = lazy(() => import("../../config/components/ConfigTab"));

export type HostTab = "metrics" | "config";

function HostSeriesSection({ hostId, range }: { hostId: number; range: TimeRange }) {
  const series = useHostSeries(hostId, range);
  if (series.isPending) return <Loading what="Loading metrics" />;
  if (series.isError) return <ErrorState error={series.error} title="Could not load metrics" />;
  return (
    <>
      <SampleGapNotices gaps={series.data.gaps} />
      <Suspense fallback={<Loading what="Loading charts" />}>
        <HostCharts series={series.data} />
      </Suspense>
    </>
  );
}

/** Tabs that keep the query string, so the chosen time range survives a visit to Config. */
function HostTabs({ hostId, search }: { hostId: number; search: string }) {
  return (
    <nav className="host-tabs" aria-label="host views">
      <NavLink to={{ pathname: `/hosts/${hostId}`, search }} end>
        Metrics
      </NavLink>
      <NavLink to={{ pathname: `/hosts/${hostId}/config`, search }}>Config</NavLink>
    </nav>
  );
}

export function HostPage({ tab = "metrics" }: { tab?: HostTab }) {
  const { hostId: rawId } = useParams();
  const hostId = Number(rawId);
  const [params, setParams] = useSearchParams();
  const range = parseRange(params.get("range"));
  const host = useHost(hostId);
  const me = useMe();
  const now = useNow();

  if (!Number.isInteger(hostId) || hostId <= 0) {
    return <ErrorState error={new Error(`"${rawId ?? ""}" is not a host id`)} title="No such host" />;
  }
  if (host.isPending) return <Loading what="Loading host" />;
  if (host.isError) return <ErrorState error={host.error} title="Could not load this host" />;

  const detail = host.data;
  const setRange = (next: TimeRange) => {
    const updated = new URLSearchParams(params);
    updated.set("range", next);
    setParams(updated, { replace: true });
  };

  return (
    <section aria-labelledby="host-title">
      <nav className="breadcrumb" aria-label="breadcrumb">
        <Link to="/">Fleet</Link> / {detail.hostname}
      </nav>
      <header className="page-header">
        <h1 id="host-title">{detail.hostname}</h1>
        <StatusBadge status={detail.status} reason={detail.status_reason} />
        {LIVE_RANGES.includes(range) ? <LiveIndicator /> : null}
      </header>
      <dl className="facts">
        <div>
          <dt>nginx</dt>
          <dd>{detail.nginx_version ?? "unknown"}</dd>
        </div>
        <div>
          <dt>agent</dt>
          <dd>{detail.agent_version ?? "unknown"}</dd>
        </div>
        <div>
          <dt>last seen</dt>
          <dd title={formatDateTime(detail.last_seen_at)}>{formatRelativeTime(detail.last_seen_at, now)}</dd>
        </div>
        <div>
          <dt>enrolled</dt>
          <dd>{formatDateTime(detail.enrolled_at)}</dd>
        </div>
        <div className="facts-labels">
          <dt>labels</dt>
          <dd>
            <LabelEditor hostId={hostId} labels={detail.labels} canEdit={hasRole(me.data?.role, "operator")} />
          </dd>
        </div>
      </dl>
      <HostBanners host={detail} />
      {hasRole(me.data?.role, "admin") ? <ResetEnrolment host={detail} /> : null}
      <HostTabs hostId={hostId} search={params.toString()} />
      {tab === "config" ? (
        <Suspense fallback={<Loading what="Loading the config view" />}>
          <ConfigTab hostId={hostId} canAcknowledge={hasRole(me.data?.role, "operator")} />
        </Suspense>
      ) : (
        <>
          <div className="toolbar">
            <RangePicker value={range} onChange={setRange} />
          </div>
          <HostSeriesSection hostId={hostId} range={range} />
          <ScoreHistory hostId={hostId} range={range} />
        </>
      )}
    </section>
  );
}
