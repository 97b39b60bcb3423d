import { describe, expect, it } from "vitest";
import { FLEET_COLUMNS, initialDirection } from "./fleet-columns";

describe("fleet columns", () => {
  it("start figures at the biggest value and names at A", () => {
    expect(initialDirection("drops_per_s")).toBe("desc");
    expect(initialDirection("errors")).toBe("desc");
    expect(initialDirection("hostname")).toBe("asc");
  });

  it("start the score, the hit ratio and the status at the worst", () => {
    expect(initialDirection("score")).toBe("asc");
    expect(initialDirection("cache_hit_ratio")).toBe("asc");
    expect(initialDirection("status")).toBe("asc");
  });

  it("list every column once", () => {
    expect(new Set(FLEET_COLUMNS).size).toBe(FLEET_COLUMNS.length);
    expect(FLEET_COLUMNS).toContain("fds");
  });
});
