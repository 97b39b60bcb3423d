/** The access log's per-upstream figures, top paths and files, as tables. */
import { useMemo, useState } from "react";
import { SortableHeader } from "../../../components/ui/SortableHeader";
import { formatCount, formatDateTime, formatLatency, formatRatio } from "../../../lib/format";
import { type SortState, nextSort, sortRows } from "../../../lib/sort";
import type { AccessLogFile, AccessLogTopPath, AccessLogUpstream } from "../api/types";
import { UPSTREAM_SORT_ACCESSORS, type UpstreamColumn, meanTime, upstreamInitialDirection } from "../utils/tables";

export function UpstreamTable({ upstreams }: { upstreams: readonly AccessLogUpstream[] }) {
  const [sort, setSort] = useState<SortState<UpstreamColumn>>({ key: "attempts", direction: "desc" });
  const rows = useMemo(() => sortRows(upstreams, UPSTREAM_SORT_ACCESSORS, sort), [upstreams, sort]);
  const onSort = (column: UpstreamColumn) => setSort((s) => nextSort(s, column, upstreamInitialDirection(column)));
  const header = (column: UpstreamColumn, label: string, numeric = true) => (
    <SortableHeader column={column} label={label} sort={sort} onSort={onSort} numeric={numeric} />
  );
  if (upstreams.length === 0) {
    return (
      <p className="muted">No upstream attempt was logged in this range (or the log format lacks $upstream_addr).</p>
    );
  }
  return (
    <div className="table-wrap">
      <table className="data-table" aria-label="upstreams">
        <thead>
          <tr>
            {header("upstream", "Upstream", false)}
            {header("attempts", "Attempts")}
            {header("errors", "Errors")}
            {header("error_share", "Error share")}
            {header("p50", "p50")}
            {header("p95", "p95")}
            {header("p99", "p99")}
          </tr>
        </thead>
        <tbody>
          {rows.map((u) => (
            <tr key={u.upstream}>
              <td>
                <code>{u.upstream}</code>
              </td>
              <td className="num">{formatCount(u.attempts)}</td>
              <td className={`num${u.errors > 0 ? " alarm" : ""}`}>{formatCount(u.errors)}</td>
              <td className="num">{formatRatio(u.error_share)}</td>
              <td className="num">{formatLatency(u.response_time_p50_s)}</td>
              <td className="num">{formatLatency(u.response_time_p95_s)}</td>
              <td className="num">{formatLatency(u.response_time_p99_s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TopPathsTable({ paths }: { paths: readonly AccessLogTopPath[] | null }) {
  if (paths === null) {
    return (
      <p className="muted">
        No top paths in this range: paths may be sensitive, so the agent sends them only with{" "}
        <code>access_log_top_paths = 20</code> (how many per site) in its config.
      </p>
    );
  }
  if (paths.length === 0) return <p className="muted">No path was logged in this range.</p>;
  // The API sends the most frequent and the slowest paths together, most frequent first.
  const showSite = new Set(paths.map((p) => p.site)).size > 1;
  return (
    <div className="table-wrap">
      <table className="data-table" aria-label="top paths">
        <thead>
          <tr>
            {showSite ? <th scope="col">Site</th> : null}
            <th scope="col">Path</th>
            <th scope="col" className="num">
              Requests
            </th>
            <th scope="col" className="num">
              Mean time
            </th>
            <th scope="col" className="num">
              Max time
            </th>
          </tr>
        </thead>
        <tbody>
          {paths.map((p) => (
            <tr key={`${p.site}\n${p.path}`}>
              {showSite ? <td>{p.site}</td> : null}
              <td>
                <code>{p.path}</code>
              </td>
              <td className="num">{formatCount(p.requests)}</td>
              <td className="num">{formatLatency(meanTime(p))}</td>
              <td className="num">{formatLatency(p.time_max_s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const STATE_LABELS: Record<string, string> = {
  ok: "read",
  missing: "does not exist yet",
  unreadable: "unreadable",
  unsupported: "not readable by the agent",
};

interface FilesTableProps {
  files: readonly AccessLogFile[];
  /** When the agent sent this report; null: never. */
  reportedAt: string | null;
}

export function FilesTable({ files, reportedAt }: FilesTableProps) {
  if (reportedAt === null) {
    return <p className="muted">The agent has not reported any access log of this host yet.</p>;
  }
  if (files.length === 0) return <p className="muted">nginx writes no access log on this host (access_log off).</p>;
  return (
    <>
      <p className="muted">
        As the agent last reported them ({formatDateTime(reportedAt)}); lines are those it read in that interval.
      </p>
      <div className="table-wrap">
        <table className="data-table" aria-label="access log files">
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Formats</th>
              <th scope="col">State</th>
              <th scope="col" className="num">
                Lines read
              </th>
              <th scope="col" className="num">
                Not matching
              </th>
              <th scope="col">Format lacks</th>
            </tr>
          </thead>
          <tbody>
            {files.map((f) => (
              <tr key={f.path}>
                <td>
                  <code>{f.path}</code>
                  {f.conditional ? <span className="muted"> (if=: only some requests)</span> : null}
                </td>
                <td>{f.formats.join(", ")}</td>
                <td className={f.state === "ok" ? undefined : "alarm"}>
                  {STATE_LABELS[f.state] ?? f.state}
                  {f.reason ? `: ${f.reason}` : ""}
                </td>
                <td className="num">{formatCount(f.lines)}</td>
                <td className={`num${f.unparsed > 0 ? " alarm" : ""}`}>{formatCount(f.unparsed)}</td>
                <td>{f.missing_fields.map((v) => `$${v}`).join(" ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
