/** Reading a finding's place (its block path, e.g. `http/server[example.com]/location[/static/]`) for people. */

export interface PlaceStep {
  /** The block's name: `server`, `location`, `if`, ... */
  name: string;
  /** What tells it from its siblings (server name, location uri, if condition); "" when nothing. */
  label: string;
  /** 2 for the second sibling with the same name and label, and so on; 1 otherwise. */
  ordinal: number;
}

const STEP = /^([^[\]#]+)(?:\[(.*)\])?(?:#(\d+))?$/s;

/**
 * The steps of a path, outermost first. Steps are split at '/' outside brackets: labels such as
 * location uris contain slashes of their own.
 */
export function placeSteps(place: string): PlaceStep[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of place) {
    if (char === "[") depth += 1;
    else if (char === "]") depth = Math.max(0, depth - 1);
    if (char === "/" && depth === 0) {
      parts.push(current);
      current = "";
    } else current += char;
  }
  if (current) parts.push(current);
  return parts
    .filter((part) => part !== "")
    .map((part) => {
      const match = STEP.exec(part);
      if (!match) return { name: part, label: "", ordinal: 1 };
      return { name: match[1] ?? part, label: match[2] ?? "", ordinal: match[3] ? Number(match[3]) : 1 };
    });
}

function stepText(step: PlaceStep): string {
  const words = [step.name, step.name === "if" && step.label ? `(${step.label})` : step.label];
  const text = words.filter(Boolean).join(" ");
  return step.ordinal > 1 ? `${text} (#${step.ordinal})` : text;
}

/**
 * Where a finding is, in words: "server example.com › location /static/". The `http` block is
 * left out when a block inside it is named (every server is in it); "" for the top level.
 */
export function describePlace(place: string): string {
  const steps = placeSteps(place);
  const shown = steps.length > 1 && steps[0]?.name === "http" && steps[0].label === "" ? steps.slice(1) : steps;
  return shown.map(stepText).join(" › ");
}
