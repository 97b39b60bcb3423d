/** The files of the config dump, in dump order, with line and finding counts. */
import type { ConfigFile } from "../api/types";

interface FileListProps {
  files: readonly ConfigFile[];
  findingCounts: ReadonlyMap<string, number>;
  selected: string | undefined;
  onSelect: (path: string) => void;
}

export function FileList({ files, findingCounts, selected, onSelect }: FileListProps) {
  return (
    <nav className="config-files" aria-label="config files">
      <ul>
        {files.map((file) => {
          const findings = findingCounts.get(file.path) ?? 0;
          return (
            <li key={file.path}>
              <button
                type="button"
                className={file.path === selected ? "file-button selected" : "file-button"}
                aria-current={file.path === selected ? "true" : undefined}
                onClick={() => onSelect(file.path)}
                title={file.path}
                aria-label={`${file.path}, ${file.line_count} lines, ${findings} findings`}
              >
                <span className="file-path">{file.path}</span>
                <span className="file-meta">
                  {file.line_count} lines
                  {findings > 0 ? <span className="file-findings">{findings} findings</span> : null}
                </span>
              </button>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
