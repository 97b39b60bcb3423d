/** A fleet row's access-log figures of the last 15 minutes, each linking to the host's Traffic tab. */
import { Link } from "react-router";
import type { FleetHost } from "../../../api/types";
import { MISSING, formatLatency, formatRatio } from "../../../lib/format";
import { FLEET_WINDOW, HIT_RATIO_DEFINITION } from "../../access-log/utils/definitions";

export const HIT_RATIO_TITLE = `Cache hit ratio over ${FLEET_WINDOW}: ${HIT_RATIO_DEFINITION}`;
export const P95_TITLE = `95th percentile of $request_time over ${FLEET_WINDOW}`;
export const SHARE_5XX_TITLE = `Share of requests answered 5xx over ${FLEET_WINDOW}`;
const NOT_MEASURED =
  `Not measured over ${FLEET_WINDOW} (no access log read, the log format lacks the variable, or no ` +
  "traffic): the host's Traffic tab says why";

interface CellProps {
  host: FleetHost;
  label: string;
  value: string;
  alarm?: boolean;
}

function Cell({ host, label, value, alarm = false }: CellProps) {
  if (value === MISSING) {
    return (
      <td className="num">
        <span title={NOT_MEASURED} aria-label={`${label} of ${host.hostname}: not measured`}>
          {MISSING}
        </span>
      </td>
    );
  }
  return (
    <td className={`num${alarm ? " alarm" : ""}`}>
      <Link to={`/hosts/${host.id}/traffic`} aria-label={`${label} of ${host.hostname}: ${value}`}>
        {value}
      </Link>
    </td>
  );
}

export function AccessLogCells({ host }: { host: FleetHost }) {
  return (
    <>
      <Cell host={host} label="cache hit ratio" value={formatRatio(host.cache_hit_ratio)} />
      <Cell host={host} label="p95 request time" value={formatLatency(host.request_time_p95_s)} />
      <Cell
        host={host}
        label="5xx share"
        value={formatRatio(host.share_5xx)}
        alarm={(host.share_5xx ?? 0) >= 0.01}
      />
    </>
  );
}
