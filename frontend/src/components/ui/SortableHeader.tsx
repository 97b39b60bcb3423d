/** A table header cell that sorts its column when clicked. */
import type { SortState } from "../../lib/sort";

interface SortableHeaderProps<K extends string> {
  column: K;
  label: string;
  sort: SortState<K>;
  onSort: (column: K) => void;
  numeric?: boolean;
  /** What the column means, shown on hover. */
  title?: string;
}

export function SortableHeader<K extends string>({
  column,
  label,
  sort,
  onSort,
  numeric,
  title,
}: SortableHeaderProps<K>) {
  const active = sort.key === column;
  const ariaSort = active ? (sort.direction === "asc" ? "ascending" : "descending") : "none";
  return (
    <th aria-sort={ariaSort} className={numeric ? "num" : undefined} scope="col" title={title}>
      <button type="button" className="sort-button" onClick={() => onSort(column)}>
        {label}
        <span className="sort-arrow" aria-hidden="true">
          {active ? (sort.direction === "asc" ? "▲" : "▼") : ""}
        </span>
      </button>
    </th>
  );
}
