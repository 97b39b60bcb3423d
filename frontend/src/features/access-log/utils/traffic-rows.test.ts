import { describe, expect, it } from "vitest";
import { emptyFigures, point } from "../test/factories";
import { CACHE_KEYS, STATUS_KEYS, hasValues, rateFactor, toTrafficRow, toTrafficRows } from "./traffic-rows";

describe("rates of a point", () => {
  it("turns counts into rates with the point's own requests per second", () => {
    // 100 requests at 10/s: the point covers 10 s whatever the nominal step.
    expect(rateFactor({ requests: 100, req_per_s: 10 }, 60)).toBeCloseTo(0.1);
    const row = toTrafficRow(point("2026-11-21T10:00:00Z"), 60);
    expect(row.s_2xx).toBeCloseTo(9);
    expect(row.c_hit).toBeCloseTo(7);
  });

  it("falls back to the step for a point without requests", () => {
    expect(rateFactor({ requests: 0, req_per_s: 0 }, 10)).toBeCloseTo(0.1);
    expect(rateFactor({ requests: null, req_per_s: null }, 0)).toBeNull();
  });
});

describe("status series", () => {
  it("splits 499 out of 4xx and 500/502/503/504 out of 5xx so the stack adds up to all requests", () => {
    const row = toTrafficRow(
      point("2026-11-21T10:00:00Z", {
        requests: 100,
        req_per_s: 100,
        status_1xx: 0,
        status_2xx: 70,
        status_3xx: 5,
        status_4xx: 10,
        status_499: 4,
        status_5xx: 15,
        status_500: 1,
        status_502: 6,
        status_503: 2,
        status_504: 3,
      }),
      10,
    );
    expect(row.s_4xx_other).toBe(6);
    expect(row.s_499).toBe(4);
    expect(row.s_5xx_other).toBe(3);
    expect([row.s_500, row.s_502, row.s_503, row.s_504]).toEqual([1, 6, 2, 3]);
    const stacked = STATUS_KEYS.reduce((sum, key) => sum + (row[key] ?? 0), 0);
    expect(stacked).toBe(100);
  });

  it("never draws a negative remainder when codes and classes disagree", () => {
    const row = toTrafficRow(point("2026-11-21T10:00:00Z", { status_5xx: 1, status_502: 3 }), 10);
    expect(row.s_5xx_other).toBe(0);
  });
});

describe("absent figures", () => {
  it("keeps a figure the format lacks absent (null), never zero", () => {
    const row = toTrafficRow(
      {
        ts: "2026-11-21T10:00:00Z",
        ...emptyFigures({ requests: 50, req_per_s: 5, status_1xx: 0, status_2xx: 50, status_3xx: 0, status_4xx: 0 }),
      },
      10,
    );
    for (const key of CACHE_KEYS) expect(row[key]).toBeNull();
    expect(row.hit_ratio).toBeNull();
    expect(row.rt_p95).toBeNull();
    expect(row.s_2xx).toBe(50 * 0.1);
    expect(row.s_499).toBeNull();
  });

  it("tells whether a chart has anything to draw", () => {
    const rows = toTrafficRows([{ ts: "2026-11-21T10:00:00Z", ...emptyFigures({ requests: 5, req_per_s: 1 }) }], 10);
    expect(hasValues(rows, ["hit_ratio"])).toBe(false);
    expect(hasValues(rows, ["req_per_s"])).toBe(true);
  });
});

describe("series shaping", () => {
  it("sorts points by time and carries the percentiles and ratios through", () => {
    const rows = toTrafficRows(
      [
        point("2026-11-21T10:00:10Z", { hit_ratio: 0.5, request_time_p99_s: 0.2 }),
        point("2026-11-21T10:00:00Z", { hit_ratio: 0.9 }),
      ],
      10,
    );
    expect(rows.map((r) => r.t)).toEqual([Date.parse("2026-11-21T10:00:00Z"), Date.parse("2026-11-21T10:00:10Z")]);
    expect(rows.map((r) => r.hit_ratio)).toEqual([0.9, 0.5]);
    expect(rows[1]?.rt_p99).toBe(0.2);
    expect(rows[0]?.share_5xx).toBe(0.02);
  });

  it("breaks the line where samples are missing for more than two steps", () => {
    const rows = toTrafficRows([point("2026-11-21T10:00:00Z"), point("2026-11-21T10:01:00Z")], 10);
    expect(rows).toHaveLength(3);
    expect(rows[1]?.t).toBe(Date.parse("2026-11-21T10:00:30Z"));
    expect(rows[1]?.hit_ratio).toBeNull();
    expect(rows[1]?.rt_p50).toBeNull();
  });

  it("drops points whose time cannot be read", () => {
    expect(toTrafficRows([point("not a time")], 10)).toEqual([]);
  });
});
