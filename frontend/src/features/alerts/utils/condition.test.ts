import { describe, expect, it } from "vitest";
import { conditionText } from "./condition";

const base = { op: ">" as const, threshold: 0, clear_threshold: null, window_s: 120, for_s: 60 };

describe("conditionText", () => {
  it("says the operator, threshold, window and hold time", () => {
    expect(conditionText(base)).toBe("> 0 over 2m for 1m");
  });

  it("leaves out a hold time of zero", () => {
    expect(conditionText({ ...base, op: "<", threshold: 14, window_s: 3600, for_s: 0 })).toBe("< 14 over 1h");
  });

  it("keeps thresholds as typed and names a separate clear threshold", () => {
    expect(conditionText({ ...base, op: ">=", threshold: 0.005, clear_threshold: 0.001, window_s: 300 })).toBe(
      ">= 0.005 over 5m for 1m, clears at 0.001",
    );
    expect(conditionText({ ...base, threshold: 1000, clear_threshold: 1000 })).toBe("> 1000 over 2m for 1m");
  });
});
