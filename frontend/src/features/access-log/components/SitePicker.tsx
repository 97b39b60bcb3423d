/** Choose one site of the host's access logs, or all of them. */
import { formatCount } from "../../../lib/format";
import type { AccessLogSite } from "../api/types";

interface SitePickerProps {
  sites: readonly AccessLogSite[];
  /** null: all sites */
  value: string | null;
  onChange: (site: string | null) => void;
}

export function SitePicker({ sites, value, onChange }: SitePickerProps) {
  // A site from the URL that had no request in this range stays choosable (and chosen).
  const known = value === null || sites.some((s) => s.site === value);
  const options = known ? sites : [...sites, { site: value, requests: 0 }];
  return (
    <label className="site-picker">
      Site{" "}
      <select value={value ?? ""} onChange={(e) => onChange(e.target.value === "" ? null : e.target.value)}>
        <option value="">All sites</option>
        {options.map((s) => (
          <option key={s.site} value={s.site}>
            {s.site} ({formatCount(s.requests)} requests)
          </option>
        ))}
      </select>
    </label>
  );
}
