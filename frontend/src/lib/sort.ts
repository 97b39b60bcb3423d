/** Sorting of table rows by a column: stable, missing values always last. */

export type SortDirection = "asc" | "desc";
export type SortValue = string | number | null | undefined;

export interface SortState<K extends string> {
  key: K;
  direction: SortDirection;
}

/** Clicking the sorted column flips it; clicking another starts at that column's default. */
export function nextSort<K extends string>(
  current: SortState<K>,
  key: K,
  initialDirection: SortDirection = "asc",
): SortState<K> {
  if (current.key === key) return { key, direction: current.direction === "asc" ? "desc" : "asc" };
  return { key, direction: initialDirection };
}

function isMissing(value: SortValue): value is null | undefined {
  return value === null || value === undefined || (typeof value === "number" && Number.isNaN(value));
}

/** Ascending comparison of two present values: numbers numerically, text naturally. */
export function compareValues(a: string | number, b: string | number): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true, sensitivity: "base" });
}

/** Return a sorted copy of rows; rows without a value sort last in both directions. */
export function sortRows<T, K extends string>(
  rows: readonly T[],
  accessors: Record<K, (row: T) => SortValue>,
  state: SortState<K>,
): T[] {
  const accessor = accessors[state.key];
  const factor = state.direction === "asc" ? 1 : -1;
  return rows
    .map((row, index) => ({ row, index, value: accessor(row) }))
    .sort((a, b) => {
      const aMissing = isMissing(a.value);
      const bMissing = isMissing(b.value);
      if (aMissing || bMissing) {
        if (aMissing && bMissing) return a.index - b.index;
        return aMissing ? 1 : -1;
      }
      const order = compareValues(a.value as string | number, b.value as string | number);
      return order === 0 ? a.index - b.index : order * factor;
    })
    .map(({ row }) => row);
}
