import { describe, expect, it } from "vitest";
import { scoreWindow, toScoreRows } from "./score-rows";

const NOW = Date.parse("2026-11-21T12:00:00Z");
const point = (ts: string, score: number) => ({ ts, score, errors: 0, warnings: 1, infos: 0 });

describe("toScoreRows", () => {
  it("orders analyses oldest first and holds the latest score until now", () => {
    const rows = toScoreRows([point("2026-11-21T11:00:00Z", 80), point("2026-11-21T10:00:00Z", 60)], NOW);
    expect(rows).toEqual([
      { t: Date.parse("2026-11-21T10:00:00Z"), score: 60 },
      { t: Date.parse("2026-11-21T11:00:00Z"), score: 80 },
      { t: NOW, score: 80 },
    ]);
  });

  it("draws nothing without analyses", () => {
    expect(toScoreRows([], NOW)).toEqual([]);
  });
});

describe("scoreWindow", () => {
  it("ends now and spans the chosen range", () => {
    const [from, to] = scoreWindow("7d", NOW);
    expect(to).toBe(NOW);
    expect(to - from).toBe(7 * 86_400_000);
  });
});
