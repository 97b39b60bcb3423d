/** Fleet page (/): every host's health and load, filterable by label, updated live. */
import { useMemo } from "react";
import { Link, useSearchParams } from "react-router";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { LABEL_FILTER_PARAM, type LabelPair, formatLabelFilter, parseLabelFilter, toggleLabelFilter } from "../../../lib/labels";
import { useMe } from "../../auth/api/auth";
import { hasRole } from "../../../lib/roles";
import { useFleet, useFleetLabels } from "../api/fleet";
import { FleetTable } from "./FleetTable";
import { LabelFilter } from "./LabelFilter";
import { LiveIndicator } from "./LiveIndicator";

export function FleetPage() {
  const [params, setParams] = useSearchParams();
  const selected = useMemo(() => parseLabelFilter(params), [params]);
  const terms = useMemo(() => selected.map(formatLabelFilter), [selected]);
  const fleet = useFleet(terms);
  const labels = useFleetLabels();
  const me = useMe();

  const toggle = (pair: LabelPair) => setParams(toggleLabelFilter(params, pair));
  const clear = () => {
    const next = new URLSearchParams(params);
    next.delete(LABEL_FILTER_PARAM);
    setParams(next);
  };

  return (
    <section aria-labelledby="fleet-title">
      <header className="page-header">
        <h1 id="fleet-title">Fleet</h1>
        {fleet.data ? <span className="muted">{fleet.data.length} hosts</span> : null}
        <LiveIndicator />
        <Link to="/findings" className="header-link">
          Top findings across the fleet
        </Link>
      </header>
      <LabelFilter available={labels.data} selected={selected} onToggle={toggle} onClear={clear} />
      {fleet.isPending ? (
        <Loading what="Loading the fleet" />
      ) : fleet.isError ? (
        <ErrorState error={fleet.error} title="Could not load the fleet" />
      ) : fleet.data.length === 0 ? (
        <EmptyState>
          {selected.length > 0 ? (
            <p>No host matches the selected labels.</p>
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
        <FleetTable hosts={fleet.data} onLabelSelect={toggle} />
      )}
    </section>
  );
}
