/** Reading a unified diff (difflib's `--- a/PATH` / `+++ b/PATH`) into files, hunks and rows. */

export type DiffLineKind = "context" | "add" | "remove";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
  /** Line number in the file before the change (none for an added line). */
  oldLine: number | null;
  /** Line number in the file after the change (none for a removed line). */
  newLine: number | null;
}

export interface DiffHunk {
  header: string;
  lines: DiffLine[];
}

export interface DiffFile {
  path: string;
  hunks: DiffHunk[];
  added: number;
  removed: number;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** `a/etc/nginx/nginx.conf` → `/etc/nginx/nginx.conf`: the engine writes `a` + the absolute path. */
function stripPrefix(name: string): string {
  const path = name.split("\t")[0] ?? name;
  return /^[ab]\//.test(path) ? path.slice(1) : path;
}

/** Every file of a unified diff with its hunks; unknown lines (e.g. "\ No newline") are skipped. */
export function parseUnifiedDiff(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  let hunk: DiffHunk | undefined;
  let oldLine = 0;
  let newLine = 0;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? "";
    if (line.startsWith("--- ") && (lines[i + 1] ?? "").startsWith("+++ ")) {
      file = { path: stripPrefix((lines[i + 1] ?? "").slice(4)), hunks: [], added: 0, removed: 0 };
      files.push(file);
      hunk = undefined;
      i += 1;
      continue;
    }
    const header = HUNK.exec(line);
    if (header && file) {
      hunk = { header: line, lines: [] };
      file.hunks.push(hunk);
      oldLine = Number(header[1]);
      newLine = Number(header[2]);
      continue;
    }
    if (!hunk || !file) continue;
    const marker = line[0];
    const body = line.slice(1).replace(/\r$/, "");
    if (marker === "+") {
      hunk.lines.push({ kind: "add", text: body, oldLine: null, newLine });
      newLine += 1;
      file.added += 1;
    } else if (marker === "-") {
      hunk.lines.push({ kind: "remove", text: body, oldLine, newLine: null });
      oldLine += 1;
      file.removed += 1;
    } else if (marker === " ") {
      hunk.lines.push({ kind: "context", text: body, oldLine, newLine });
      oldLine += 1;
      newLine += 1;
    }
  }
  return files;
}

/** One row of a side-by-side view: the old line on the left, the new one on the right. */
export interface SplitRow {
  left: DiffLine | null;
  right: DiffLine | null;
}

/**
 * Pair a hunk's lines for a side-by-side view: context on both sides, and each run of removed
 * lines next to the run of added lines that follows it (a changed line reads across).
 */
export function splitRows(lines: readonly DiffLine[]): SplitRow[] {
  const rows: SplitRow[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line) break;
    if (line.kind === "context") {
      rows.push({ left: line, right: line });
      i += 1;
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    while (lines[i]?.kind === "remove") removed.push(lines[i++] as DiffLine);
    while (lines[i]?.kind === "add") added.push(lines[i++] as DiffLine);
    for (let k = 0; k < Math.max(removed.length, added.length); k += 1) {
      rows.push({ left: removed[k] ?? null, right: added[k] ?? null });
    }
  }
  return rows;
}
