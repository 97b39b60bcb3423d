/** The alerts shaded on a host's charts, as links under them (the bands themselves are not focusable). */
import { Link } from "react-router";
import { formatDateTime } from "../../../lib/format";
import type { AlertBand } from "../utils/alert-bands";
import { SeverityTag } from "./AlertTags";

export function AlertMarks({ bands, error }: { bands: readonly AlertBand[]; error: Error | null }) {
  if (error) {
    // The charts stand without the bands; say quietly that they are missing.
    return <p className="muted">Alert periods could not be loaded: {error.message}</p>;
  }
  if (bands.length === 0) return null;
  return (
    <ul className="alert-marks" aria-label="alerts on the charts">
      {bands.map((band) => (
        <li key={band.incidentId}>
          <span className="alert-mark-swatch" style={{ background: band.color }} aria-hidden="true" />
          <SeverityTag severity={band.severity} />
          <Link to={`/alerts/incidents/${band.incidentId}`}>{band.ruleName}</Link>
          <span className="muted">
            {formatDateTime(band.from)} – {band.open ? "still firing" : formatDateTime(band.to)}
          </span>
        </li>
      ))}
    </ul>
  );
}
