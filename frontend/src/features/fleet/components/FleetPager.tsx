/** Page controls of the fleet table: where the page sits, previous / next, hosts per page. */
import { useId } from "react";
import { formatCount } from "../../../lib/format";
import { PAGE_SIZES, pageInfo } from "./fleet-view";

interface FleetPagerProps {
  limit: number;
  offset: number;
  /** Hosts the filters match, on every page. */
  total: number;
  /** Rows on the page shown. */
  shown: number;
  onOffset: (offset: number) => void;
  onLimit: (limit: number) => void;
}

export function FleetPager({ limit, offset, total, shown, onOffset, onLimit }: FleetPagerProps) {
  const sizeId = useId();
  const info = pageInfo({ limit, offset }, total, shown);
  // A size given in the URL (?limit=2) stays selectable next to the usual ones.
  const sizes = (PAGE_SIZES as readonly number[]).includes(limit) ? PAGE_SIZES : [...PAGE_SIZES, limit].sort((a, b) => a - b);
  return (
    <nav className="pager" aria-label="fleet pages">
      <span className="muted" aria-live="polite">
        {info.first}–{info.last} of {formatCount(total)} hosts · page {info.page} of {info.pages}
      </span>
      <button type="button" disabled={info.previousOffset === null} onClick={() => onOffset(0)}>
        First
      </button>
      <button
        type="button"
        disabled={info.previousOffset === null}
        onClick={() => info.previousOffset !== null && onOffset(info.previousOffset)}
      >
        Previous
      </button>
      <button
        type="button"
        disabled={info.nextOffset === null}
        onClick={() => info.nextOffset !== null && onOffset(info.nextOffset)}
      >
        Next
      </button>
      <label htmlFor={sizeId}>Hosts per page</label>
      <select id={sizeId} value={limit} onChange={(e) => onLimit(Number(e.target.value))}>
        {sizes.map((size) => (
          <option key={size} value={size}>
            {size}
          </option>
        ))}
      </select>
    </nav>
  );
}
