import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration";

const seconds = (text: string) => {
  const result = parseDuration(text, "Window");
  return result.ok ? result.seconds : result.error;
};

describe("parseDuration", () => {
  it("reads seconds, minutes, hours, days and their combinations", () => {
    expect(seconds("30s")).toBe(30);
    expect(seconds("2m")).toBe(120);
    expect(seconds("1h")).toBe(3600);
    expect(seconds("1d")).toBe(86_400);
    expect(seconds("1h30m")).toBe(5400);
    expect(seconds(" 1h 30m ")).toBe(5400);
    expect(seconds("2M")).toBe(120);
    expect(seconds("0s")).toBe(0);
  });

  it("refuses a bare number, saying which units it could be", () => {
    expect(seconds("5")).toBe("Window needs a unit: 5s, 5m or 5h");
  });

  it("refuses what is not a duration, naming the field", () => {
    for (const text of ["2x", "m", "2m junk", "1.5h", "-2m"]) {
      expect(seconds(text)).toMatch(/^Window ".*" is not a duration like 30s, 2m, 1h or 1h30m$/);
    }
    expect(seconds("")).toBe("Window is required");
  });

  it("wants each unit once, largest first", () => {
    expect(seconds("30m1h")).toBe("Window: give each unit once, largest first (e.g. 1h30m)");
    expect(seconds("1m1m")).toBe("Window: give each unit once, largest first (e.g. 1h30m)");
  });

  it("applies the field's limits", () => {
    expect(parseDuration("5s", "Window", { min: 10 })).toEqual({ ok: false, error: "Window must be at least 10 s" });
    expect(parseDuration("91d", "Duration", { max: 90 * 86_400 })).toEqual({
      ok: false,
      error: "Duration must be at most 90 d",
    });
    expect(parseDuration("90d", "Duration", { max: 90 * 86_400 })).toEqual({ ok: true, seconds: 90 * 86_400 });
  });
});
