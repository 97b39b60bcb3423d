import { describe, expect, it } from "vitest";
import { seriesPoint } from "../../../test/factories";
import { stackedActive, toChartRow, toChartRows } from "./chart-rows";

const at = (seconds: number) => new Date(Date.parse("2026-11-21T10:00:00Z") + seconds * 1000).toISOString();

describe("stacked Active connections", () => {
  it("is exactly Reading + Writing + Waiting, so the stack top equals the total", () => {
    const point = seriesPoint({ reading: 2, writing: 5, waiting: 30, active: 41 });
    expect(stackedActive(point)).toBe(37);
    const row = toChartRow(point);
    expect((row.reading ?? 0) + (row.writing ?? 0) + (row.waiting ?? 0)).toBe(row.active);
  });

  it("is unknown when any part is unknown, rather than a misleading partial sum", () => {
    expect(stackedActive(seriesPoint({ reading: 1, writing: null, waiting: 4 }))).toBeNull();
    expect(toChartRow(seriesPoint({ waiting: null })).active).toBeNull();
  });
});

describe("toChartRow", () => {
  it("converts time to ms and memory to a percentage", () => {
    const row = toChartRow(seriesPoint({ ts: at(0), mem_used_bytes: 1024, mem_total_bytes: 4096 }));
    expect(row.t).toBe(Date.parse(at(0)));
    expect(row.mem_pct).toBe(25);
    expect(toChartRow(seriesPoint({ mem_total_bytes: 0 })).mem_pct).toBeNull();
  });

  it("keeps missing metrics as null, not zero", () => {
    const row = toChartRow(seriesPoint({ req_per_s: null, drops_per_s: null }));
    expect(row.req_per_s).toBeNull();
    expect(row.drops_per_s).toBeNull();
  });
});

describe("toChartRows", () => {
  it("sorts by time and inserts one empty row inside holes longer than two steps", () => {
    const points = [seriesPoint({ ts: at(60) }), seriesPoint({ ts: at(0) }), seriesPoint({ ts: at(10) })];
    const rows = toChartRows(points, 10);
    expect(rows.map((r) => r.t - Date.parse(at(0)))).toEqual([0, 10_000, 35_000, 60_000]);
    const gap = rows[2];
    expect(gap?.req_per_s).toBeNull();
    expect(gap?.reading).toBeNull();
  });

  it("does not break a series whose points are one or two steps apart", () => {
    const rows = toChartRows([seriesPoint({ ts: at(0) }), seriesPoint({ ts: at(20) })], 10);
    expect(rows).toHaveLength(2);
  });

  it("drops points whose time cannot be read", () => {
    expect(toChartRows([seriesPoint({ ts: "garbage" })], 10)).toEqual([]);
  });
});
