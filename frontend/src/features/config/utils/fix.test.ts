import { describe, expect, it } from "vitest";
import { isMachineFixable, readFix } from "./fix";

describe("readFix", () => {
  it("reads the engine's fix shape", () => {
    const fix = readFix({ action: "set", directive: "gzip", args: ["on"], file: "/n.conf", line: 4, context: "http" });
    expect(fix).toEqual({
      action: "set",
      directive: "gzip",
      args: ["on"],
      file: "/n.conf",
      line: 4,
      context: "http",
      note: "",
    });
  });

  it("refuses anything else instead of showing half a fix", () => {
    expect(readFix(null)).toBeNull();
    expect(
      readFix({ action: "set", directive: "gzip", args: "on", file: "/n.conf", line: 4, context: "http" }),
    ).toBeNull();
  });
});

describe("isMachineFixable", () => {
  const fix = { directive: "gzip", args: ["on"], file: "/n.conf", line: 4, context: "http" };

  it("offers a diff for the actions the engine edits", () => {
    for (const action of ["set", "add", "remove", "replace"]) expect(isMachineFixable({ ...fix, action })).toBe(true);
  });

  it("offers none for a manual fix, no fix or a malformed one", () => {
    expect(isMachineFixable({ ...fix, action: "none" })).toBe(false);
    expect(isMachineFixable(null)).toBe(false);
    expect(isMachineFixable({ ...fix, action: "set", line: "4" })).toBe(false);
  });
});
