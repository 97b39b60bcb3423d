import { describe, expect, it } from "vitest";
import { readFix } from "./fix";

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
