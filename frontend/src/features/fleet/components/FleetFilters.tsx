/** Hostname search and status filter of the fleet page (both applied by the server). */
import { useEffect, useId, useState } from "react";
import type { HostStatus } from "../../../api/types";
import { useDebounced } from "../../../lib/use-debounced";
import { HOST_STATUSES } from "./fleet-view";

// Typing settles before the server is asked again.
const SEARCH_DEBOUNCE_MS = 300;

interface FleetFiltersProps {
  q: string;
  statuses: readonly HostStatus[];
  onSearch: (q: string) => void;
  onStatuses: (statuses: HostStatus[]) => void;
}

export function FleetFilters({ q, statuses, onSearch, onStatuses }: FleetFiltersProps) {
  const searchId = useId();
  const [text, setText] = useState(q);
  const [shownQ, setShownQ] = useState(q);
  // The URL wins when it changes under the box (back button, a link): adjusted while rendering.
  if (q !== shownQ) {
    setShownQ(q);
    setText(q);
  }
  const settled = useDebounced(text.trim(), SEARCH_DEBOUNCE_MS);
  useEffect(() => {
    if (settled !== q) onSearch(settled);
    // Only a settled change of the text searches; q changing alone must not search again.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [settled]);

  const toggle = (status: HostStatus) =>
    onStatuses(
      statuses.includes(status) ? statuses.filter((s) => s !== status) : [...statuses, status].sort(),
    );

  return (
    <div className="fleet-filters">
      <label htmlFor={searchId}>Search hostname</label>
      <input
        id={searchId}
        type="search"
        value={text}
        maxLength={253}
        placeholder="part of a hostname"
        onChange={(e) => setText(e.target.value)}
      />
      <fieldset>
        <legend>Status</legend>
        {HOST_STATUSES.map((status) => (
          <label key={status}>
            <input type="checkbox" checked={statuses.includes(status)} onChange={() => toggle(status)} /> {status}
          </label>
        ))}
      </fieldset>
    </div>
  );
}
