import { describe, expect, it } from "vitest";
import { GZIP_DIFF } from "../test/factories";
import { parseUnifiedDiff, splitRows } from "./diff";

const TWO_FILES = [
  "--- a/etc/nginx/nginx.conf",
  "+++ b/etc/nginx/nginx.conf",
  "@@ -1,3 +1,4 @@",
  " events {",
  "+    multi_accept on;",
  "     worker_connections 768;",
  " }",
  "--- a/etc/nginx/conf.d/site.conf",
  "+++ b/etc/nginx/conf.d/site.conf",
  "@@ -10,2 +10,2 @@",
  "-    keepalive_timeout 65;",
  "+    keepalive_timeout 15s;",
  " }",
  "",
].join("\n");

describe("parseUnifiedDiff", () => {
  it("numbers each line in the old and the new file from its hunk header", () => {
    const [file] = parseUnifiedDiff(GZIP_DIFF);
    expect(file?.path).toBe("/etc/nginx/nginx.conf");
    expect(file?.added).toBe(1);
    expect(file?.removed).toBe(1);
    expect(file?.hunks[0]?.lines).toEqual([
      { kind: "context", text: "}", oldLine: 4, newLine: 4 },
      { kind: "context", text: "http {", oldLine: 5, newLine: 5 },
      { kind: "remove", text: "    gzip off;", oldLine: 6, newLine: null },
      { kind: "add", text: "    gzip on;", oldLine: null, newLine: 6 },
      { kind: "context", text: "}", oldLine: 7, newLine: 7 },
    ]);
  });

  it("keeps every file of a change made in several files", () => {
    const files = parseUnifiedDiff(TWO_FILES);
    expect(files.map((f) => [f.path, f.added, f.removed])).toEqual([
      ["/etc/nginx/nginx.conf", 1, 0],
      ["/etc/nginx/conf.d/site.conf", 1, 1],
    ]);
    expect(files[1]?.hunks[0]?.lines[0]).toEqual({
      kind: "remove",
      text: "    keepalive_timeout 65;",
      oldLine: 10,
      newLine: null,
    });
  });

  it("reads nothing from an empty diff", () => {
    expect(parseUnifiedDiff("")).toEqual([]);
  });
});

describe("splitRows", () => {
  it("puts a removed line next to the added line that replaces it, and context on both sides", () => {
    const lines = parseUnifiedDiff(GZIP_DIFF)[0]?.hunks[0]?.lines ?? [];
    const rows = splitRows(lines).map((row) => [row.left?.text ?? null, row.right?.text ?? null]);
    expect(rows).toEqual([
      ["}", "}"],
      ["http {", "http {"],
      ["    gzip off;", "    gzip on;"],
      ["}", "}"],
    ]);
  });

  it("leaves the old side empty for an added line", () => {
    const lines = parseUnifiedDiff(TWO_FILES)[0]?.hunks[0]?.lines ?? [];
    const row = splitRows(lines)[1];
    expect(row?.left).toBeNull();
    expect(row?.right?.text).toBe("    multi_accept on;");
  });
});
