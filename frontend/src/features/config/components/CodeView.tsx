/** One config file with line numbers, nginx highlighting and finding markers in the gutter. */
import { useEffect, useMemo, useRef } from "react";
import type { ConfigFile } from "../api/types";
import type { LineMarker } from "../utils/findings";
import { highlightNginx } from "../utils/highlight";
import "../highlight.css";

interface CodeViewProps {
  file: ConfigFile;
  markers: ReadonlyMap<number, LineMarker>;
  selectedLine: number | undefined;
  onMarker: (marker: LineMarker) => void;
}

/** Lines of a file; the empty string after a final newline is not a line of its own. */
function displayLines(text: string): string[] {
  const lines = highlightNginx(text);
  if (lines.length > 1 && text.endsWith("\n")) lines.pop();
  return lines;
}

function markerLabel(marker: LineMarker): string {
  const rules = marker.findings.map((f) => f.rule).join(", ");
  return `${marker.severity}${marker.muted ? " (muted)" : ""} at line ${marker.line}: ${rules}`;
}

export function CodeView({ file, markers, selectedLine, onMarker }: CodeViewProps) {
  const lines = useMemo(() => displayLines(file.text), [file.text]);
  const selectedRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    // jsdom has no layout, hence no scrollIntoView.
    selectedRef.current?.scrollIntoView?.({ block: "center", behavior: "smooth" });
  }, [selectedLine, file.path]);

  return (
    <div className="code-view" role="region" aria-label={`file ${file.path}`}>
      <div className="code-title">{file.path}</div>
      <pre className="code-lines hljs">
        {lines.map((html, index) => {
          const line = index + 1;
          const marker = markers.get(line);
          const selected = line === selectedLine;
          return (
            <div
              key={line}
              ref={selected ? selectedRef : undefined}
              className={selected ? "code-line selected" : "code-line"}
              data-line={line}
            >
              <span className="code-gutter">
                {marker ? (
                  <button
                    type="button"
                    className={`marker marker-${marker.severity}${marker.muted ? " marker-muted" : ""}`}
                    aria-label={markerLabel(marker)}
                    title={marker.findings.map((f) => f.message).join("\n")}
                    onClick={() => onMarker(marker)}
                  />
                ) : null}
              </span>
              <span className="line-number" aria-hidden="true">
                {line}
              </span>
              {/* highlight.js escapes the source text; only its own span tags are markup. */}
              <code className="line-code" dangerouslySetInnerHTML={{ __html: html || " " }} />
            </div>
          );
        })}
      </pre>
    </div>
  );
}
