/** Which hosts a rule as drafted would match now: asked of the server once typing settles. */
import { useMemo } from "react";
import { Link } from "react-router";
import { ErrorState } from "../../../components/ui/states";
import { formatMeasure } from "../../../lib/format";
import { useDebounced } from "../../../lib/use-debounced";
import { useRulePreview } from "../api/alerts";
import type { RuleBody, RulePreview, RulePreviewHost } from "../api/types";
import { conditionText } from "../utils/condition";

export const PREVIEW_DEBOUNCE_MS = 500;

export function previewCountText(preview: Pick<RulePreview, "matching" | "evaluated">): string {
  return `${preview.matching} of ${preview.evaluated} ${preview.evaluated === 1 ? "host" : "hosts"} would match`;
}

function HostState({ host }: { host: RulePreviewHost }) {
  if (host.no_data) return <span className="preview-nodata">no data</span>;
  if (host.matches) return <span className="preview-match">matches</span>;
  return <span className="muted">does not match</span>;
}

interface RulePreviewPanelProps {
  /** The checked draft, or null while the form has errors. */
  body: RuleBody | null;
  unit: string | undefined;
}

export function RulePreviewPanel({ body, unit }: RulePreviewPanelProps) {
  // Debounced as text: a new object of the same rule (every render makes one) is no change.
  const text = body === null ? null : JSON.stringify(body);
  const settledText = useDebounced(text, PREVIEW_DEBOUNCE_MS);
  const settled = useMemo(() => (settledText === null ? null : (JSON.parse(settledText) as RuleBody)), [settledText]);
  const preview = useRulePreview(settled);
  const checking = text !== settledText || preview.isFetching;

  return (
    <section className="rule-preview card" aria-label="preview">
      <h2>Preview: which hosts match now</h2>
      {body ? (
        <p className="muted">
          Condition: <code>{conditionText(body)}</code>
        </p>
      ) : (
        <p className="muted">Fix the form to see which hosts would match.</p>
      )}
      {checking ? <p className="muted">Checking…</p> : null}
      {preview.isError && body ? <ErrorState error={preview.error} title="Could not preview the rule" /> : null}
      {preview.data && body ? (
        <>
          <p className="preview-count">{previewCountText(preview.data)}</p>
          {preview.data.hosts.length > 0 ? (
            <div className="table-wrap">
              <table className="data-table" aria-label="hosts in scope">
                <thead>
                  <tr>
                    <th scope="col">Host</th>
                    <th scope="col" className="num">
                      Value
                    </th>
                    <th scope="col">Now</th>
                  </tr>
                </thead>
                <tbody>
                  {preview.data.hosts.map((host) => (
                    <tr key={host.host_id}>
                      <td>
                        <Link to={`/hosts/${host.host_id}`}>{host.hostname}</Link>
                      </td>
                      <td className="num">{formatMeasure(host.value, unit)}</td>
                      <td>
                        <HostState host={host} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p className="muted">No host is in the rule's scope.</p>
          )}
        </>
      ) : null}
    </section>
  );
}
