import { describe, expect, it } from "vitest";
import { sortRows } from "../../../lib/sort";
import { fleetHost } from "../../../test/factories";
import { FLEET_SORT_ACCESSORS, initialDirection } from "./fleet-columns";

describe("fleet sorting", () => {
  it("puts the worst health first when sorting by status", () => {
    const hosts = [
      fleetHost({ id: 1, status: "up" }),
      fleetHost({ id: 2, status: "new" }),
      fleetHost({ id: 3, status: "down" }),
      fleetHost({ id: 4, status: "stale" }),
    ];
    const sorted = sortRows(hosts, FLEET_SORT_ACCESSORS, { key: "status", direction: "asc" });
    expect(sorted.map((h) => h.status)).toEqual(["down", "stale", "new", "up"]);
  });

  it("sorts fds by how full they are, not by the count", () => {
    const hosts = [
      fleetHost({ id: 1, fds_open: 500, fds_limit: 65535 }),
      fleetHost({ id: 2, fds_open: 900, fds_limit: 1024 }),
    ];
    const sorted = sortRows(hosts, FLEET_SORT_ACCESSORS, { key: "fds", direction: "desc" });
    expect(sorted.map((h) => h.id)).toEqual([2, 1]);
  });

  it("starts figures at the biggest value and names at A", () => {
    expect(initialDirection("drops_per_s")).toBe("desc");
    expect(initialDirection("hostname")).toBe("asc");
  });
});

describe("fleet config score columns", () => {
  const scored = (id: number, score: number | null, error = 0, warning = 0) =>
    fleetHost({ id, score, findings: score === null ? null : { error, warning, info: 0 } });

  it("puts the lowest score first on the first click, hosts without a score last", () => {
    const hosts = [scored(1, 95), scored(2, null), scored(3, 60), scored(4, 80)];
    const sorted = sortRows(hosts, FLEET_SORT_ACCESSORS, { key: "score", direction: initialDirection("score") });
    expect(sorted.map((h) => h.id)).toEqual([3, 4, 1, 2]);
  });

  it("puts the most errors first on the first click", () => {
    const hosts = [scored(1, 90, 0, 9), scored(2, 50, 2, 1), scored(3, 70, 1, 3)];
    const sorted = sortRows(hosts, FLEET_SORT_ACCESSORS, { key: "errors", direction: initialDirection("errors") });
    expect(sorted.map((h) => h.id)).toEqual([2, 3, 1]);
  });
});

describe("fleet access-log columns", () => {
  const measured = (id: number, hitRatio: number | null, p95: number | null, share5xx: number | null) =>
    fleetHost({ id, cache_hit_ratio: hitRatio, request_time_p95_s: p95, share_5xx: share5xx });
  const hosts = [
    measured(1, 0.9, 0.05, 0),
    measured(2, null, null, null),
    measured(3, 0.2, 0.4, 0.03),
    measured(4, 0.6, 0.01, 0.001),
  ];
  const firstClick = (key: "cache_hit_ratio" | "request_time_p95_s" | "share_5xx") =>
    sortRows(hosts, FLEET_SORT_ACCESSORS, { key, direction: initialDirection(key) }).map((h) => h.id);

  it("puts the lowest hit ratio first on the first click, hosts not measured last", () => {
    expect(firstClick("cache_hit_ratio")).toEqual([3, 4, 1, 2]);
  });

  it("puts the slowest p95 and the most 5xx first, hosts not measured last", () => {
    expect(firstClick("request_time_p95_s")).toEqual([3, 1, 4, 2]);
    expect(firstClick("share_5xx")).toEqual([3, 4, 1, 2]);
  });

  it("keeps hosts not measured last when the order is flipped", () => {
    const flipped = sortRows(hosts, FLEET_SORT_ACCESSORS, { key: "cache_hit_ratio", direction: "desc" });
    expect(flipped.map((h) => h.id)).toEqual([1, 4, 3, 2]);
  });
});
