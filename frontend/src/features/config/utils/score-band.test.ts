import { describe, expect, it } from "vitest";
import { scoreBand } from "./score-band";

describe("scoreBand", () => {
  it("puts 90 and above in good, 70 to 89 in fair, below 70 in poor", () => {
    expect([100, 90, 89, 70, 69, 0].map(scoreBand)).toEqual(["good", "good", "fair", "fair", "poor", "poor"]);
  });

  it("has no band without a score", () => {
    expect(scoreBand(null)).toBeNull();
    expect(scoreBand(undefined)).toBeNull();
    expect(scoreBand(Number.NaN)).toBeNull();
  });
});
