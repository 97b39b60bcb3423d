import { describe, expect, it } from "vitest";
import type { Severity } from "../api/types";
import { finding } from "../test/factories";
import {
  SEVERITIES,
  countByFile,
  countBySeverity,
  filterFindings,
  groupByCategory,
  markersForFile,
  worstSeverity,
} from "./findings";

const all = new Set<Severity>(SEVERITIES);

describe("filterFindings", () => {
  const list = [
    finding({ key: "a", severity: "error" }),
    finding({ key: "b", severity: "warning" }),
    finding({ key: "c", severity: "info", muted: true }),
    finding({ key: "d", severity: "info" }),
  ];

  it("keeps only the selected severities", () => {
    const keys = filterFindings(list, { severities: new Set<Severity>(["error", "info"]), showMuted: false }).map(
      (f) => f.key,
    );
    expect(keys).toEqual(["a", "d"]);
  });

  it("hides muted findings unless asked to show them", () => {
    expect(filterFindings(list, { severities: all, showMuted: false }).map((f) => f.key)).toEqual(["a", "b", "d"]);
    expect(filterFindings(list, { severities: all, showMuted: true }).map((f) => f.key)).toEqual(["a", "b", "c", "d"]);
  });
});

describe("groupByCategory", () => {
  it("groups by category, worst group first, and orders each group by severity then line", () => {
    const groups = groupByCategory([
      finding({ key: "gz", category: "compression", severity: "info", line: 9 }),
      finding({ key: "w2", category: "workers", severity: "warning", line: 8 }),
      finding({ key: "w1", category: "workers", severity: "warning", line: 3 }),
      finding({ key: "tls", category: "tls", severity: "error", line: 20 }),
    ]);
    expect(groups.map((g) => g.category)).toEqual(["tls", "workers", "compression"]);
    expect(groups[1]?.findings.map((f) => f.key)).toEqual(["w1", "w2"]);
  });

  it("returns no groups for no findings", () => {
    expect(groupByCategory([])).toEqual([]);
  });
});

describe("markersForFile", () => {
  it("puts one marker per line, coloured by the worst finding on it", () => {
    const markers = markersForFile(
      [
        finding({ key: "x", line: 3, severity: "info" }),
        finding({ key: "y", line: 3, severity: "error" }),
        finding({ key: "z", line: 5, severity: "warning" }),
        finding({ key: "other", file: "/etc/nginx/conf.d/a.conf", line: 3 }),
      ],
      "/etc/nginx/nginx.conf",
      10,
    );
    expect([...markers.keys()].sort()).toEqual([3, 5]);
    expect(markers.get(3)?.severity).toBe("error");
    expect(markers.get(3)?.findings.map((f) => f.key)).toEqual(["y", "x"]);
    expect(markers.get(5)?.severity).toBe("warning");
  });

  it("clamps lines outside the file to its first and last line", () => {
    const markers = markersForFile(
      [finding({ key: "eof", line: 99 }), finding({ key: "zero", line: 0 })],
      "/etc/nginx/nginx.conf",
      7,
    );
    expect(markers.get(7)?.findings[0]?.key).toBe("eof");
    expect(markers.get(1)?.findings[0]?.key).toBe("zero");
  });

  it("marks a line muted only when every finding on it is muted, and colours it by the live ones", () => {
    const markers = markersForFile(
      [
        finding({ key: "m", line: 3, severity: "error", muted: true }),
        finding({ key: "live", line: 3, severity: "info" }),
        finding({ key: "m2", line: 4, severity: "warning", muted: true }),
      ],
      "/etc/nginx/nginx.conf",
      7,
    );
    expect(markers.get(3)).toMatchObject({ severity: "info", muted: false });
    expect(markers.get(4)).toMatchObject({ severity: "warning", muted: true });
  });
});

describe("countByFile and worstSeverity", () => {
  it("counts unmuted findings per file", () => {
    const counts = countByFile([
      finding({ key: "1" }),
      finding({ key: "2", muted: true }),
      finding({ key: "3", file: "/etc/nginx/mime.types" }),
    ]);
    expect(counts.get("/etc/nginx/nginx.conf")).toBe(1);
    expect(counts.get("/etc/nginx/mime.types")).toBe(1);
  });

  it("finds the worst severity, none for an empty list", () => {
    expect(worstSeverity([finding({ severity: "info" }), finding({ severity: "warning" })])).toBe("warning");
    expect(worstSeverity([])).toBeUndefined();
  });
});

describe("countBySeverity", () => {
  it("counts each severity, muted findings only when they are shown", () => {
    const list = [
      finding({ severity: "error" }),
      finding({ severity: "info", muted: true }),
      finding({ severity: "info" }),
    ];
    expect(countBySeverity(list, false)).toEqual({ error: 1, warning: 0, info: 1 });
    expect(countBySeverity(list, true)).toEqual({ error: 1, warning: 0, info: 2 });
  });
});
