import { describe, expect, it } from "vitest";
import { timeTicks } from "./time-ticks";

const t = (iso: string) => Date.parse(iso);
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

describe("timeTicks", () => {
  it("puts round ticks across the whole window, not only where data is", () => {
    const ticks = timeTicks(t("2026-11-21T09:41:07Z"), t("2026-11-21T10:41:07Z"));
    expect(ticks.map(hhmm)).toEqual(["09:50", "10:00", "10:10", "10:20", "10:30", "10:40"]);
  });

  it("keeps the count at or below the maximum for every offered range", () => {
    const to = t("2026-11-21T10:41:07Z");
    for (const minutes of [15, 60, 360, 1440, 10080]) {
      const ticks = timeTicks(to - minutes * 60_000, to);
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      expect(ticks.length).toBeLessThanOrEqual(7);
      expect(ticks.every((x) => x >= to - minutes * 60_000 && x <= to)).toBe(true);
    }
  });

  it("returns nothing for an empty or reversed window", () => {
    expect(timeTicks(10, 10)).toEqual([]);
    expect(timeTicks(20, 10)).toEqual([]);
  });
});
