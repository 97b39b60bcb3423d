/** Directive arguments as the operator types them: words, quoted where they hold spaces. */

/** Arguments as one line: `max=10000 inactive=30s`; one with spaces or quotes is single-quoted. */
export function formatArgs(args: readonly string[]): string {
  return args.map((arg) => (arg === "" || /[\s'"]/.test(arg) ? `'${arg.replace(/(['\\])/g, "\\$1")}'` : arg)).join(" ");
}

/** Split typed arguments on spaces, keeping '…' and "…" together (a backslash escapes the quote). */
export function parseArgs(text: string): string[] {
  const args: string[] = [];
  let current = "";
  let quote: string | null = null;
  let inArg = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] ?? "";
    if (quote) {
      if (char === "\\" && (text[i + 1] === quote || text[i + 1] === "\\")) {
        current += text[i + 1];
        i += 1;
      } else if (char === quote) {
        quote = null;
      } else {
        current += char;
      }
    } else if (char === "'" || char === '"') {
      quote = char;
      inArg = true;
    } else if (/\s/.test(char)) {
      if (inArg) args.push(current);
      current = "";
      inArg = false;
    } else {
      current += char;
      inArg = true;
    }
  }
  if (inArg) args.push(current);
  return args;
}

/** Whether two argument lists are the same. */
export function sameArgs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((arg, i) => arg === b[i]);
}
