/** A fleet row's config score (linking to the host's Config tab) and its error and warning counts. */
import { Link } from "react-router";
import type { FleetHost } from "../../../api/types";
import { formatCount } from "../../../lib/format";
import { ScoreBadge } from "../../config/components/ScoreBadge";

export function AnalysisCells({ host }: { host: FleetHost }) {
  const { score, findings } = host;
  return (
    <>
      <td className="num">
        {score === null ? (
          <ScoreBadge score={null} />
        ) : (
          <Link to={`/hosts/${host.id}/config`} aria-label={`config score of ${host.hostname}: ${score}`}>
            <ScoreBadge score={score} />
          </Link>
        )}
      </td>
      <td className={`num${(findings?.error ?? 0) > 0 ? " alarm" : ""}`}>{formatCount(findings?.error)}</td>
      <td className="num">{formatCount(findings?.warning)}</td>
    </>
  );
}
