/**
 * Fleet page (/): the hosts' health and load, one page at a time, sorted, filtered and paged by
 * the server (so 10,000 hosts cost what 50 do), with the view kept in the URL; updated live.
 */
import { useEffect, useMemo } from "react";
import { Link, useSearchParams } from "react-router";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { LABEL_FILTER_PARAM, type LabelPair, formatLabelFilter, parseLabelFilter, toggleLabelFilter } from "../../../lib/labels";
import { hasRole } from "../../../lib/roles";
import { useMe } from "../../auth/api/auth";
import { useFleet, useFleetLabels, useFleetSummary } from "../api/fleet";
import type { FleetColumn } from "./fleet-columns";
import { type FleetView, lastPageOffset, parseFleetView, refilter, sortBy, writeFleetView } from "./fleet-view";
import "./fleet.css";
import { FleetFilters } from "./FleetFilters";
import { FleetPager } from "./FleetPager";
import { FleetSummaryCards } from "./FleetSummaryCards";
import { FleetTable } from "./FleetTable";
import { LabelFilter } from "./LabelFilter";
import { LiveIndicator } from "./LiveIndicator";

export function FleetPage() {
  const [params, setParams] = useSearchParams();
  const selected = useMemo(() => parseLabelFilter(params), [params]);
  const terms = useMemo(() => selected.map(formatLabelFilter), [selected]);
  const view = useMemo(() => parseFleetView(params), [params]);
  const fleet = useFleet(terms, view);
  const summary = useFleetSummary(terms, view);
  const labels = useFleetLabels();
  const me = useMe();

  const show = (next: FleetView) => setParams(writeFleetView(params, next));
  // A label filter narrows the fleet: its page one is where the matching hosts start.
  const toggle = (pair: LabelPair) => setParams(writeFleetView(toggleLabelFilter(params, pair), refilter(view, {})));
  const clear = () => {
    const next = new URLSearchParams(params);
    next.delete(LABEL_FILTER_PARAM);
    setParams(writeFleetView(next, refilter(view, {})));
  };

  // Hosts went away under the page shown (a filter, removals): go to the last page there is.
  const total = fleet.data?.total;
  const pastTheEnd = total !== undefined && !fleet.isPlaceholderData && view.offset > 0 && view.offset >= total;
  useEffect(() => {
    if (pastTheEnd) setParams(writeFleetView(params, { ...view, offset: lastPageOffset(view.limit, total) }), { replace: true });
  }, [pastTheEnd, params, setParams, total, view]);

  const filtered = selected.length > 0 || view.q !== "" || view.statuses.length > 0;

  return (
    <section aria-labelledby="fleet-title">
      <header className="page-header">
        <h1 id="fleet-title">Fleet</h1>
        {fleet.data ? <span className="muted">{fleet.data.total} hosts</span> : null}
        <LiveIndicator />
        <Link to="/findings" className="header-link">
          Top findings across the fleet
        </Link>
      </header>
      {summary.data ? <FleetSummaryCards summary={summary.data} /> : null}
      <LabelFilter available={labels.data} selected={selected} onToggle={toggle} onClear={clear} />
      <FleetFilters
        q={view.q}
        statuses={view.statuses}
        onSearch={(q) => show(refilter(view, { q }))}
        onStatuses={(statuses) => show(refilter(view, { statuses }))}
      />
      {fleet.isPending ? (
        <Loading what="Loading the fleet" />
      ) : fleet.isError ? (
        <ErrorState error={fleet.error} title="Could not load the fleet" />
      ) : fleet.data.total === 0 ? (
        <EmptyState>
          {filtered ? (
            <p>No host matches the filters.</p>
          ) : (
            <>
              <p>No hosts yet.</p>
              {hasRole(me.data?.role, "admin") ? (
                <p>
                  Enrol the first nginx server from <Link to="/settings/agents">Settings → Agents</Link>.
                </p>
              ) : (
                <p>Ask an admin to enrol nginx servers.</p>
              )}
            </>
          )}
        </EmptyState>
      ) : (
        <>
          <FleetTable
            hosts={fleet.data.items}
            sort={{ key: view.sort, direction: view.order }}
            onSort={(column: FleetColumn) => show(sortBy(view, column))}
            onLabelSelect={toggle}
            updating={fleet.isPlaceholderData}
          />
          <FleetPager
            limit={view.limit}
            offset={view.offset}
            total={fleet.data.total}
            shown={fleet.data.items.length}
            onOffset={(offset) => show({ ...view, offset })}
            onLimit={(limit) => show(refilter(view, { limit }))}
          />
        </>
      )}
    </section>
  );
}
