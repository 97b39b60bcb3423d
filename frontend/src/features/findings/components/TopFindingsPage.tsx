/** Top findings across the fleet (/findings): which rule hits how many hosts. */
import { Link } from "react-router";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { formatCount } from "../../../lib/format";
import { hasRole } from "../../../lib/roles";
import { useMe } from "../../auth/api/auth";
import { SeverityBadge } from "../../config/components/SeverityBadge";
import { useTopFindings } from "../api/top-findings";
import "./top-findings.css";

export function TopFindingsPage() {
  const top = useTopFindings();
  // Operators and admins may start a rollout of a rule's fix from here.
  const canRollOut = hasRole(useMe().data?.role, "operator");
  return (
    <section aria-labelledby="top-findings-title">
      <header className="page-header">
        <h1 id="top-findings-title">Top findings</h1>
        <span className="muted">over each host’s latest analysis, muted findings left out</span>
      </header>
      {top.isPending ? <Loading what="Loading findings" /> : null}
      {top.isError ? <ErrorState error={top.error} title="Could not load the top findings" /> : null}
      {top.data && top.data.length === 0 ? (
        <EmptyState>No findings across the fleet (or no configuration has been analysed yet).</EmptyState>
      ) : null}
      {top.data && top.data.length > 0 ? (
        <div className="table-wrap">
          <table className="data-table" aria-label="top findings">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Severity</th>
                <th scope="col">Category</th>
                <th scope="col" className="num">
                  Hosts
                </th>
                <th scope="col" className="num">
                  Findings
                </th>
                <th scope="col">Example</th>
                <th scope="col">Docs</th>
                {canRollOut ? <th scope="col">Fix</th> : null}
              </tr>
            </thead>
            <tbody>
              {top.data.map((row) => (
                <tr key={`${row.rule}/${row.severity}`}>
                  <td className="rule-id">{row.rule}</td>
                  <td>
                    <SeverityBadge severity={row.severity} />
                  </td>
                  <td>{row.category}</td>
                  <td className="num">{formatCount(row.hosts)}</td>
                  <td className="num">{formatCount(row.findings)}</td>
                  <td className="example-message">{row.example_message}</td>
                  <td>
                    {row.doc_url ? (
                      <a
                        href={row.doc_url}
                        target="_blank"
                        rel="noreferrer noopener"
                        aria-label={`nginx docs for ${row.rule}`}
                      >
                        nginx docs
                      </a>
                    ) : null}
                  </td>
                  {canRollOut ? (
                    <td className="nowrap">
                      <Link
                        to={`/rollouts/new?rule=${encodeURIComponent(row.rule)}`}
                        aria-label={`roll out the fix of ${row.rule}`}
                      >
                        Roll out fix
                      </Link>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
