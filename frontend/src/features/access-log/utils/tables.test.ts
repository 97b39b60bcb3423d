import { describe, expect, it } from "vitest";
import { sortRows } from "../../../lib/sort";
import type { AccessLogUpstream } from "../api/types";
import { UPSTREAM_SORT_ACCESSORS, meanTime, upstreamInitialDirection } from "./tables";

const upstream = (address: string, errorShare: number | null, p95: number | null): AccessLogUpstream => ({
  upstream: address,
  attempts: 10,
  errors: 0,
  error_share: errorShare,
  response_time_p50_s: null,
  response_time_p95_s: p95,
  response_time_p99_s: null,
});

describe("upstream table", () => {
  it("puts the worst error share first on the first click, unmeasured last", () => {
    const rows = [upstream("a:80", 0.01, 0.1), upstream("b:80", null, 0.2), upstream("c:80", 0.5, 0.05)];
    const sorted = sortRows(rows, UPSTREAM_SORT_ACCESSORS, {
      key: "error_share",
      direction: upstreamInitialDirection("error_share"),
    });
    expect(sorted.map((u) => u.upstream)).toEqual(["c:80", "a:80", "b:80"]);
    expect(upstreamInitialDirection("upstream")).toBe("asc");
  });
});

describe("top paths", () => {
  it("uses the API's mean time, else the sum over the requests", () => {
    expect(meanTime({ requests: 4, time_sum_s: 2, time_mean_s: 0.4 })).toBe(0.4);
    expect(meanTime({ requests: 4, time_sum_s: 2, time_mean_s: null })).toBe(0.5);
    expect(meanTime({ requests: 0, time_sum_s: 0, time_mean_s: null })).toBeNull();
  });
});
