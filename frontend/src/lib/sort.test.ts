import { describe, expect, it } from "vitest";
import { type SortState, compareValues, nextSort, sortRows } from "./sort";

interface Row {
  name: string;
  rate: number | null;
}

const accessors = { name: (r: Row) => r.name, rate: (r: Row) => r.rate };
type Key = keyof typeof accessors;

const rows: Row[] = [
  { name: "web-10", rate: 5 },
  { name: "web-2", rate: null },
  { name: "Web-1", rate: 50 },
  { name: "db-1", rate: 5 },
];

describe("sortRows", () => {
  it("sorts text naturally and case-insensitively", () => {
    const sorted = sortRows(rows, accessors, { key: "name", direction: "asc" });
    expect(sorted.map((r) => r.name)).toEqual(["db-1", "Web-1", "web-2", "web-10"]);
  });

  it("sorts numbers numerically in both directions with missing values last", () => {
    const up = sortRows(rows, accessors, { key: "rate", direction: "asc" });
    expect(up.map((r) => r.rate)).toEqual([5, 5, 50, null]);
    const down = sortRows(rows, accessors, { key: "rate", direction: "desc" });
    expect(down.map((r) => r.rate)).toEqual([50, 5, 5, null]);
  });

  it("is stable for equal values and leaves the input untouched", () => {
    const before = rows.map((r) => r.name);
    const sorted = sortRows(rows, accessors, { key: "rate", direction: "desc" });
    expect(sorted.slice(1, 3).map((r) => r.name)).toEqual(["web-10", "db-1"]);
    expect(rows.map((r) => r.name)).toEqual(before);
  });
});

describe("nextSort", () => {
  const start: SortState<Key> = { key: "name", direction: "asc" };

  it("flips the direction when the same column is clicked again", () => {
    expect(nextSort(start, "name")).toEqual({ key: "name", direction: "desc" });
    expect(nextSort(nextSort(start, "name"), "name")).toEqual(start);
  });

  it("starts a new column at its own initial direction", () => {
    expect(nextSort(start, "rate", "desc")).toEqual({ key: "rate", direction: "desc" });
    expect(nextSort(start, "rate")).toEqual({ key: "rate", direction: "asc" });
  });
});

describe("compareValues", () => {
  it("orders numbers by value, not as text", () => {
    expect(compareValues(9, 10)).toBeLessThan(0);
    expect(compareValues("9", "10")).toBeLessThan(0);
  });
});
