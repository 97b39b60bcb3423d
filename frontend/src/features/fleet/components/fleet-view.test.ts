import { describe, expect, it } from "vitest";
import {
  DEFAULT_VIEW,
  type FleetView,
  lastPageOffset,
  pageInfo,
  parseFleetView,
  refilter,
  sortBy,
  writeFleetView,
} from "./fleet-view";

const parse = (query: string) => parseFleetView(new URLSearchParams(query));

describe("fleet view in the URL", () => {
  it("reads the defaults from an empty URL and writes nothing back", () => {
    expect(parse("")).toEqual(DEFAULT_VIEW);
    expect(writeFleetView(new URLSearchParams(), DEFAULT_VIEW).toString()).toBe("");
  });

  it("survives a round trip, keeping the label filter", () => {
    const view: FleetView = {
      sort: "req_per_s",
      order: "desc",
      limit: 2,
      offset: 4,
      q: "edge",
      statuses: ["down", "stale"],
    };
    const written = writeFleetView(new URLSearchParams("label=env:prod"), view);
    expect(written.getAll("label")).toEqual(["env:prod"]);
    expect(parseFleetView(written)).toEqual(view);
  });

  it("falls back on what it cannot read", () => {
    expect(parse("sort=colour&order=up&limit=0&offset=-3&status=sleeping")).toEqual(DEFAULT_VIEW);
    expect(parse("limit=501").limit).toBe(50);
    expect(parse("limit=2").limit).toBe(2);
  });

  it("starts a sort named without an order at that column's worst", () => {
    expect(parse("sort=score")).toMatchObject({ sort: "score", order: "asc" });
    expect(parse("sort=cpu_pct")).toMatchObject({ sort: "cpu_pct", order: "desc" });
  });
});

describe("fleet view changes", () => {
  it("flip the sorted column, start another worst first, and go back to page one", () => {
    const paged = { ...DEFAULT_VIEW, offset: 100 };
    expect(sortBy(paged, "hostname")).toMatchObject({ sort: "hostname", order: "desc", offset: 0 });
    expect(sortBy(paged, "drops_per_s")).toMatchObject({ sort: "drops_per_s", order: "desc", offset: 0 });
    expect(sortBy(paged, "score")).toMatchObject({ sort: "score", order: "asc" });
  });

  it("go back to page one on a new filter or page size", () => {
    expect(refilter({ ...DEFAULT_VIEW, offset: 150 }, { q: "web" })).toMatchObject({ q: "web", offset: 0 });
    expect(refilter({ ...DEFAULT_VIEW, offset: 150 }, { limit: 100 })).toMatchObject({ limit: 100, offset: 0 });
  });
});

describe("page info", () => {
  it("places a middle page among the matching hosts", () => {
    expect(pageInfo({ limit: 50, offset: 50 }, 10_000, 50)).toEqual({
      page: 2,
      pages: 200,
      first: 51,
      last: 100,
      previousOffset: 0,
      nextOffset: 100,
    });
  });

  it("has no next page at the end and no previous one at the start", () => {
    expect(pageInfo({ limit: 2, offset: 2 }, 4, 2)).toMatchObject({ page: 2, pages: 2, nextOffset: null });
    expect(pageInfo({ limit: 2, offset: 0 }, 4, 2)).toMatchObject({ previousOffset: null, nextOffset: 2 });
    expect(pageInfo({ limit: 50, offset: 0 }, 0, 0)).toMatchObject({ page: 1, pages: 1, first: 0, last: 0 });
  });

  it("finds the last page when hosts went away under a page", () => {
    expect(lastPageOffset(50, 120)).toBe(100);
    expect(lastPageOffset(50, 100)).toBe(50);
    expect(lastPageOffset(50, 0)).toBe(0);
  });
});
