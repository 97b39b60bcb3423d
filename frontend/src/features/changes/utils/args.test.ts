import { describe, expect, it } from "vitest";
import { formatArgs, parseArgs, sameArgs } from "./args";

describe("directive arguments", () => {
  it("splits typed words and keeps quoted ones together", () => {
    expect(parseArgs("max=10000  inactive=30s")).toEqual(["max=10000", "inactive=30s"]);
    expect(parseArgs(`timed '$remote_addr [$time_local]' "a 'b'"`)).toEqual([
      "timed",
      "$remote_addr [$time_local]",
      "a 'b'",
    ]);
    expect(parseArgs("   ")).toEqual([]);
  });

  it("writes arguments back so that parsing gives them again", () => {
    for (const args of [["on"], ["max=10000", "inactive=30s"], ["timed", "$a - $b [x]", "it's"]]) {
      expect(parseArgs(formatArgs(args))).toEqual(args);
    }
    expect(formatArgs(["max=1", "a b"])).toBe("max=1 'a b'");
  });

  it("compares argument lists", () => {
    expect(sameArgs(["on"], ["on"])).toBe(true);
    expect(sameArgs(["on"], ["off"])).toBe(false);
    expect(sameArgs(["a"], ["a", "b"])).toBe(false);
  });
});
