/**
 * Host page (/hosts/:id, /hosts/:id/traffic, /hosts/:id/config, /hosts/:id/changes): header,
 * labels, then one tab.
 */
import { Suspense, lazy, useMemo } from "react";
import { Link, NavLink, useParams, useSearchParams } from "react-router";
import type { TimeRange } from "../../../api/types";
import { StatusBadge } from "../../../components/ui/StatusBadge";
import { ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime, formatRelativeTime } from "../../../lib/format";
import { hasRole } from "../../../lib/roles";
import { useNow } from "../../../lib/use-now";
import { useAlertPeriods } from "../../alerts/api/alerts";
import { AlertMarks } from "../../alerts/components/AlertMarks";
import { alertBands } from "../../alerts/utils/alert-bands";
import { useMe } from "../../auth/api/auth";
import { useChanges } from "../../changes/api/changes";
import { ChangeStatusBadge } from "../../changes/components/ChangeStatusBadge";
import { LIVE_RANGES } from "../../fleet/api/live-cache";
import { useLiveHostScope } from "../../fleet/api/live-events";
import { LiveIndicator } from "../../fleet/components/LiveIndicator";
import { useHost, useHostSeries } from "../api/host";
import { HostBanners } from "./HostBanners";
import { LabelEditor } from "./LabelEditor";
import { RangePicker, parseRange } from "./RangePicker";
import { ResetEnrolment } from "./ResetEnrolment";
import { SampleGapNotices } from "./SampleGapNotices";
import { ScoreHistory } from "./ScoreHistory";
import { type ChangeMark, changeMarkers } from "../utils/change-markers";
import "./host-tabs.css";

// Recharts is large; it loads only when a host page is opened.
const HostCharts = lazy(() => import("./HostCharts"));
// The config view carries the syntax highlighter; it loads only when its tab is opened.
const ConfigTab = lazy(() => import("../../config/components/ConfigTab"));
const HostChangesTab = lazy(() => import("../../changes/components/HostChangesTab"));
const TrafficTab = lazy(() => import("../../access-log/components/TrafficTab"));

export type HostTab = "metrics" | "traffic" | "config" | "changes";

// Enough to cover every change of a 7-day range on a busy host.
const CHART_CHANGES_LIMIT = 200;

/** The changes marked on the charts, as links under them (the lines themselves are not focusable). */
function ChangeMarks({ marks }: { marks: readonly ChangeMark[] }) {
  if (marks.length === 0) return null;
  return (
    <ul className="change-marks" aria-label="changes on the charts">
      {marks.map((mark) => (
        <li key={mark.changeId}>
          <span className="change-mark-swatch" style={{ borderColor: mark.color }} aria-hidden="true" />
          <Link to={`/changes/${mark.changeId}`}>{mark.label}</Link> <ChangeStatusBadge status={mark.status} />{" "}
          <span className="muted">
            {formatDateTime(mark.t)} · {mark.title}
          </span>
        </li>
      ))}
    </ul>
  );
}

function HostSeriesSection({ hostId, range }: { hostId: number; range: TimeRange }) {
  const series = useHostSeries(hostId, range);
  const changes = useChanges({ hostId, limit: CHART_CHANGES_LIMIT });
  const from = series.data?.from;
  const to = series.data?.to;
  const periods = useAlertPeriods(hostId, range);
  const marks = useMemo(
    () => (from && to && changes.data ? changeMarkers(changes.data.items, Date.parse(from), Date.parse(to)) : []),
    [changes.data, from, to],
  );
  const bands = useMemo(
    () => (from && to && periods.data ? alertBands(periods.data, Date.parse(from), Date.parse(to)) : []),
    [periods.data, from, to],
  );
  if (series.isPending) return <Loading what="Loading metrics" />;
  if (series.isError) return <ErrorState error={series.error} title="Could not load metrics" />;
  return (
    <>
      <SampleGapNotices gaps={series.data.gaps} />
      <Suspense fallback={<Loading what="Loading charts" />}>
        <HostCharts series={series.data} markers={marks} bands={bands} />
      </Suspense>
      <ChangeMarks marks={marks} />
      <AlertMarks bands={bands} error={periods.error} />
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
      <NavLink to={{ pathname: `/hosts/${hostId}/traffic`, search }}>Traffic</NavLink>
      <NavLink to={{ pathname: `/hosts/${hostId}/config`, search }}>Config</NavLink>
      <NavLink to={{ pathname: `/hosts/${hostId}/changes`, search }}>Changes</NavLink>
    </nav>
  );
}

export function HostPage({ tab = "metrics" }: { tab?: HostTab }) {
  const { hostId: rawId } = useParams();
  const hostId = Number(rawId);
  // The tab's live stream carries this host's samples while its page is open.
  useLiveHostScope(hostId);
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
  const isOperator = hasRole(me.data?.role, "operator");
  const setParam = (name: string, value: string | null) => {
    const updated = new URLSearchParams(params);
    if (value === null) updated.delete(name);
    else updated.set(name, value);
    setParams(updated, { replace: true });
  };
  const setRange = (next: TimeRange) => setParam("range", next);

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
            <LabelEditor hostId={hostId} labels={detail.labels} canEdit={isOperator} />
          </dd>
        </div>
      </dl>
      <HostBanners host={detail} />
      {hasRole(me.data?.role, "admin") ? <ResetEnrolment host={detail} /> : null}
      <HostTabs hostId={hostId} search={params.toString()} />
      {tab === "config" ? (
        <Suspense fallback={<Loading what="Loading the config view" />}>
          <ConfigTab
            hostId={hostId}
            canAcknowledge={isOperator}
            applyAllowed={detail.apply_allowed}
            canPropose={isOperator}
          />
        </Suspense>
      ) : tab === "changes" ? (
        <Suspense fallback={<Loading what="Loading the changes" />}>
          <HostChangesTab hostId={hostId} applyAllowed={detail.apply_allowed} />
        </Suspense>
      ) : tab === "traffic" ? (
        <Suspense fallback={<Loading what="Loading the traffic view" />}>
          <TrafficTab
            hostId={hostId}
            range={range}
            onRangeChange={setRange}
            site={params.get("site")}
            onSiteChange={(site) => setParam("site", site)}
            canPropose={isOperator}
            applyAllowed={detail.apply_allowed}
          />
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
