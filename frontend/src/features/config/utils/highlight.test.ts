import { describe, expect, it } from "vitest";
import { highlightNginx, splitHighlightedLines } from "./highlight";

describe("splitHighlightedLines", () => {
  it("closes spans at a line break and reopens them on the next line", () => {
    const lines = splitHighlightedLines('a <span class="hljs-string">"one\ntwo"</span>;\nb');
    expect(lines).toEqual(['a <span class="hljs-string">"one</span>', '<span class="hljs-string">two"</span>;', "b"]);
  });
});

describe("highlightNginx", () => {
  it("gives one line of markup per source line, keeping the text and escaping it", () => {
    const text = "events {\n    worker_connections 768; # <b>\n}\nlog_format main '$a\n  $b';";
    const lines = highlightNginx(text);
    expect(lines).toHaveLength(5);
    const plain = lines.map((html) => {
      const el = document.createElement("div");
      el.innerHTML = html;
      return el.textContent;
    });
    expect(plain).toEqual(text.split("\n"));
    expect(lines[1]).toContain("&lt;b&gt;");
    expect(lines[1]).toMatch(/hljs-/);
  });
});
