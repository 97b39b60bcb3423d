/** A unified diff, nginx-highlighted, as one column (unified) or old | new (side by side). */
import { useMemo, useState } from "react";
import { highlightNginx } from "../../config/utils/highlight";
import "../../config/highlight.css";
import { type DiffFile, type DiffLine, parseUnifiedDiff, splitRows } from "../utils/diff";

type Layout = "unified" | "split";

const MARKER = { add: "+", remove: "−", context: " " } as const;

/** highlight.js escapes the text; only its own span tags are markup. */
function Code({ text }: { text: string }) {
  const html = useMemo(() => highlightNginx(text)[0] ?? "", [text]);
  return <code className="diff-code" dangerouslySetInnerHTML={{ __html: html || " " }} />;
}

function lineLabel(line: DiffLine): string | undefined {
  if (line.kind === "add") return `added line ${line.newLine ?? ""}`;
  if (line.kind === "remove") return `removed line ${line.oldLine ?? ""}`;
  return undefined;
}

function UnifiedHunk({ lines }: { lines: readonly DiffLine[] }) {
  return (
    <>
      {lines.map((line, i) => (
        <div key={i} className={`diff-row diff-${line.kind}`} aria-label={lineLabel(line)}>
          <span className="diff-num" aria-hidden="true">
            {line.oldLine ?? ""}
          </span>
          <span className="diff-num" aria-hidden="true">
            {line.newLine ?? ""}
          </span>
          <span className="diff-marker" aria-hidden="true">
            {MARKER[line.kind]}
          </span>
          <Code text={line.text} />
        </div>
      ))}
    </>
  );
}

function Side({ line, side }: { line: DiffLine | null; side: "old" | "new" }) {
  if (!line) return <div className="diff-side diff-empty" />;
  const number = side === "old" ? line.oldLine : line.newLine;
  return (
    <div className={`diff-side diff-${line.kind}`} aria-label={lineLabel(line)}>
      <span className="diff-num" aria-hidden="true">
        {number ?? ""}
      </span>
      <span className="diff-marker" aria-hidden="true">
        {MARKER[line.kind]}
      </span>
      <Code text={line.text} />
    </div>
  );
}

function SplitHunk({ lines }: { lines: readonly DiffLine[] }) {
  const rows = useMemo(() => splitRows(lines), [lines]);
  return (
    <>
      {rows.map((row, i) => (
        <div key={i} className="diff-split-row">
          <Side line={row.left} side="old" />
          <Side line={row.right} side="new" />
        </div>
      ))}
    </>
  );
}

function FileDiff({ file, layout }: { file: DiffFile; layout: Layout }) {
  return (
    <section className="diff-file" aria-label={`diff of ${file.path}`}>
      <div className="diff-file-title">
        <span>{file.path}</span>
        <span className="muted">
          <span className="diff-count-add">+{file.added}</span>{" "}
          <span className="diff-count-remove">−{file.removed}</span>
        </span>
      </div>
      <pre className={`diff-lines hljs diff-${layout}`}>
        {file.hunks.map((hunk, i) => (
          <div key={i} className="diff-hunk">
            <div className="diff-hunk-header">{hunk.header}</div>
            {layout === "unified" ? <UnifiedHunk lines={hunk.lines} /> : <SplitHunk lines={hunk.lines} />}
          </div>
        ))}
      </pre>
    </section>
  );
}

export function DiffView({ diff }: { diff: string }) {
  const [layout, setLayout] = useState<Layout>("unified");
  const files = useMemo(() => parseUnifiedDiff(diff), [diff]);
  if (files.length === 0) return <p className="muted">The diff is empty: nothing in the files changes.</p>;
  return (
    <div className="diff-view" role="region" aria-label="diff">
      <div role="group" aria-label="diff layout" className="segmented diff-layout">
        <button type="button" aria-pressed={layout === "unified"} onClick={() => setLayout("unified")}>
          Unified
        </button>
        <button type="button" aria-pressed={layout === "split"} onClick={() => setLayout("split")}>
          Side by side
        </button>
      </div>
      {files.map((file) => (
        <FileDiff key={file.path} file={file} layout={layout} />
      ))}
    </div>
  );
}
