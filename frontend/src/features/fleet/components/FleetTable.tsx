/** One page of the fleet as a dense table; a header click asks the server for another sort. */
import { Link } from "react-router";
import type { FleetHost } from "../../../api/types";
import { LabelChips } from "../../../components/ui/LabelChips";
import { SortableHeader } from "../../../components/ui/SortableHeader";
import { StatusBadge } from "../../../components/ui/StatusBadge";
import {
  formatCount,
  formatPercent,
  formatRate,
  formatRelativeTime,
  formatUsage,
} from "../../../lib/format";
import type { LabelPair } from "../../../lib/labels";
import type { SortState } from "../../../lib/sort";
import { useNow } from "../../../lib/use-now";
import { AccessLogCells, HIT_RATIO_TITLE, P95_TITLE, SHARE_5XX_TITLE } from "./AccessLogCells";
import { AnalysisCells } from "./AnalysisCells";
import type { FleetColumn } from "./fleet-columns";

interface FleetTableProps {
  /** The page's rows, in the server's order. */
  hosts: readonly FleetHost[];
  sort: SortState<FleetColumn>;
  onSort: (column: FleetColumn) => void;
  onLabelSelect: (pair: LabelPair) => void;
  /** A new page or sort is on its way: the rows shown are the previous ones. */
  updating?: boolean;
}

export function FleetTable({ hosts, sort, onSort, onLabelSelect, updating = false }: FleetTableProps) {
  const now = useNow();
  const header = (column: FleetColumn, label: string, numeric = true, title?: string) => (
    <SortableHeader column={column} label={label} sort={sort} onSort={onSort} numeric={numeric} title={title} />
  );

  return (
    <div className="table-wrap">
      <table className="data-table" aria-label="fleet" aria-busy={updating}>
        <thead>
          <tr>
            {header("hostname", "Host", false)}
            {header("status", "Status", false)}
            <th scope="col">Labels</th>
            {header("score", "Score")}
            {header("errors", "Errors")}
            {header("warnings", "Warnings")}
            {header("req_per_s", "Req/s")}
            {header("active", "Active")}
            {header("waiting", "Waiting")}
            {header("drops_per_s", "Drops/s")}
            {header("cache_hit_ratio", "Hit ratio", true, HIT_RATIO_TITLE)}
            {header("request_time_p95_s", "p95", true, P95_TITLE)}
            {header("share_5xx", "5xx", true, SHARE_5XX_TITLE)}
            {header("cpu_pct", "CPU")}
            {header("mem_used_pct", "Memory")}
            {header("fds", "FDs")}
            {header("last_seen_at", "Last seen")}
          </tr>
        </thead>
        <tbody>
          {hosts.map((host) => (
            <tr key={host.id}>
              <td>
                <Link to={`/hosts/${host.id}`}>{host.hostname}</Link>
              </td>
              <td>
                <StatusBadge status={host.status} reason={host.status_reason} />
              </td>
              <td>
                <LabelChips labels={host.labels} onSelect={onLabelSelect} />
              </td>
              <AnalysisCells host={host} />
              <td className="num">{formatRate(host.req_per_s)}</td>
              <td className="num">{formatCount(host.active)}</td>
              <td className="num">{formatCount(host.waiting)}</td>
              <td className={`num${(host.drops_per_s ?? 0) > 0 ? " alarm" : ""}`}>{formatRate(host.drops_per_s)}</td>
              <AccessLogCells host={host} />
              <td className="num">{formatPercent(host.cpu_pct)}</td>
              <td className="num">{formatPercent(host.mem_used_pct)}</td>
              <td className="num">{formatUsage(host.fds_open, host.fds_limit)}</td>
              <td className="num" title={host.last_seen_at ?? undefined}>
                {formatRelativeTime(host.last_seen_at, now)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
