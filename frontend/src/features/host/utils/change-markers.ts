/** Applied changes of a host as chart markers, so their effect shows on the graphs. */
import type { ChartMarker } from "../../../components/charts";
import type { Change } from "../../changes/api/types";

/** A chart marker that knows its change, for the list of changes under the charts. */
export interface ChangeMark extends ChartMarker {
  changeId: number;
  status: string;
  title: string;
}

const COLORS: Record<string, string> = { verified: "#1f5fbf", rolled_back: "#c5221f" };

/**
 * Each change that reached the config (verified, or rolled back by the agent after a failed
 * step) inside [fromMs, toMs], at the time its outcome came (the API's `finished_at`: the
 * contract's applied_at), labelled with its id; oldest first.
 */
export function changeMarkers(changes: readonly Change[], fromMs: number, toMs: number): ChangeMark[] {
  return changes
    .filter((c) => c.status in COLORS && c.finished_at !== null)
    .map((c) => ({ change: c, t: Date.parse(c.finished_at ?? "") }))
    .filter(({ t }) => Number.isFinite(t) && t >= fromMs && t <= toMs)
    .sort((a, b) => a.t - b.t)
    .map(({ change, t }) => ({
      t,
      label: `${change.kind === "rollback" ? "rollback" : "change"} ${change.id}`,
      color: COLORS[change.status] ?? "#687082",
      changeId: change.id,
      status: change.status,
      title: change.title,
    }));
}
