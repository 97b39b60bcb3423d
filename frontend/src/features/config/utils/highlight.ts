/** nginx syntax highlighting (highlight.js core with only its nginx grammar), split into lines. */
import hljs from "highlight.js/lib/core";
import nginx from "highlight.js/lib/languages/nginx";

hljs.registerLanguage("nginx", nginx);

const TOKEN = /<span class="([^"]*)">|<\/span>|\n/g;

/**
 * Split highlighted HTML into one HTML string per source line. A token may span lines (a
 * multi-line log_format string), so spans open at a line break are closed there and reopened
 * on the next line, keeping every line's markup balanced.
 */
export function splitHighlightedLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let current = "";
  let last = 0;
  for (const match of html.matchAll(TOKEN)) {
    current += html.slice(last, match.index);
    last = match.index + match[0].length;
    if (match[0] === "\n") {
      lines.push(current + "</span>".repeat(open.length));
      current = open.map((cls) => `<span class="${cls}">`).join("");
    } else if (match[0] === "</span>") {
      open.pop();
      current += match[0];
    } else {
      open.push(match[1] ?? "");
      current += match[0];
    }
  }
  lines.push(current + html.slice(last));
  return lines;
}

/** Highlighted HTML for each line of an nginx config file (text is escaped by highlight.js). */
export function highlightNginx(text: string): string[] {
  const html = hljs.highlight(text, { language: "nginx", ignoreIllegals: true }).value;
  return splitHighlightedLines(html);
}
