/** Why an access-log figure is missing (the API's `missing`), in words an operator acts on. */
import type { Finding } from "../../config/api/types";
import type { Figure, MissingFigure, MissingFigures } from "../api/types";

export const FIGURES: readonly Figure[] = ["hit_ratio", "latency", "upstream_latency", "status"];

export const FIGURE_LABELS: Record<Figure, string> = {
  hit_ratio: "Cache hit ratio",
  latency: "Request time",
  upstream_latency: "Upstream response time",
  status: "Status codes",
};

/** Why there can be traffic without the figure. */
const QUIET: Record<Figure, string> = {
  hit_ratio: "no request in this range had a cache status",
  latency: "no request was logged in this range",
  upstream_latency: "no request in this range went to an upstream",
  status: "no request was logged in this range",
};

/** One reason and every figure it empties (a file the agent cannot read empties them all). */
export interface MissingGroup {
  figures: Figure[];
  reason: MissingFigure;
  /** format_lacks_field: every variable the formats lack for these figures, e.g. $request_time. */
  variables: string[];
}

/** `$request_time` whether the API names it with its dollar or not. */
export function variableName(variable: string | null | undefined): string {
  if (!variable) return "a variable";
  return variable.startsWith("$") ? variable : `$${variable}`;
}

function listOf(items: readonly string[], conjunction = "and"): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} ${conjunction} ${items[items.length - 1] ?? ""}`;
}

function formatsPhrase(formats: readonly string[] | undefined): string {
  const names = formats ?? [];
  if (names.length === 0) return "the log format in use";
  return `${names.length > 1 ? "the log formats" : "the log format"} ${listOf(names)}`;
}

function pathOf(reason: MissingFigure): string {
  return reason.path ?? "the access log";
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "Cache hit ratio and request time" */
export function figuresLabel(figures: readonly Figure[]): string {
  return listOf(figures.map((f, i) => (i === 0 ? FIGURE_LABELS[f] : FIGURE_LABELS[f].toLowerCase())));
}

/**
 * How serious a reason is: a config or permission problem warns; a format without a variable
 * that no finding asks for (no cache configured, so no C-observable finding) only informs.
 */
export function severityOf(reason: MissingFigure): "warning" | "info" {
  if (reason.reason === "no_traffic" || reason.reason === "not_applicable") return "info";
  if (reason.reason === "format_lacks_field" && reason.rule && !reason.finding_key) return "info";
  return "warning";
}

/** The sentence of a banner: why these figures are missing. */
export function describeGroup(group: MissingGroup): string {
  const { reason } = group;
  switch (reason.reason) {
    case "no_access_log":
      return (
        "No access log is read on this host: nginx writes none (access_log off, or syslog only), " +
        "or its agent does not read access logs yet."
      );
    case "format_lacks_field": {
      const formats = reason.formats ?? [];
      const verb = formats.length > 1 ? "do" : "does";
      return `${capitalized(formatsPhrase(formats))} ${verb} not record ${listOf(group.variables, "or")}.`;
    }
    case "file_unreadable":
      return `The agent cannot read ${pathOf(reason)}${reason.file_reason ? `: ${reason.file_reason}` : ""}.`;
    case "lines_do_not_match":
      return `No line of ${pathOf(reason)} matches its log format${reason.sample_format ? ` ${reason.sample_format}` : ""}.`;
    case "no_traffic":
      return `${capitalized(listOf(group.figures.map((f) => QUIET[f])))}.`;
    default:
      return reason.message;
  }
}

/** A few words for a chart's empty state; the banner above the charts says the rest. */
export function describeShort(figure: Figure, reason: MissingFigure): string {
  switch (reason.reason) {
    case "not_applicable":
      return figure === "hit_ratio" ? "no cache is configured on this host" : "nothing is passed to an upstream";
    case "no_access_log":
      return "no access log is read on this host";
    case "format_lacks_field": {
      const formats = reason.formats ?? [];
      return `${formatsPhrase(formats)} ${formats.length > 1 ? "lack" : "lacks"} ${variableName(reason.variable)}`;
    }
    case "file_unreadable":
      return `the agent cannot read ${pathOf(reason)}`;
    case "lines_do_not_match":
      return `log lines do not match the format${reason.sample_format ? ` ${reason.sample_format}` : ""}`;
    case "no_traffic":
      return QUIET[figure];
    default:
      return reason.message;
  }
}

/** A chart's or a total's empty state: not applicable to this config, or not measured and why. */
export function whyEmpty(figure: Figure, reason: MissingFigure): string {
  const prefix = reason.reason === "not_applicable" ? "Not applicable" : "Not measured";
  return `${prefix}: ${describeShort(figure, reason)}`;
}

/** What makes two figures' reasons one banner: the same cause, whatever variable each needs. */
function groupKey(reason: MissingFigure): string {
  switch (reason.reason) {
    case "format_lacks_field":
      return JSON.stringify([reason.reason, reason.formats ?? [], reason.rule ?? null, reason.finding_key ?? null]);
    case "file_unreadable":
      return JSON.stringify([reason.reason, reason.path ?? null, reason.file_reason ?? null]);
    case "lines_do_not_match":
      return JSON.stringify([
        reason.reason,
        reason.path ?? null,
        reason.sample_line ?? null,
        reason.sample_format ?? null,
      ]);
    default:
      return JSON.stringify([reason.reason]);
  }
}

/**
 * The banners to show, in the order the charts are: figures missing for the same cause
 * together. No traffic is no fault, and a figure the config cannot have (no cache, nothing
 * proxied) is not missing: the charts' empty states say it, with no banner.
 */
export function groupMissing(missing: MissingFigures | null | undefined): MissingGroup[] {
  const groups = new Map<string, MissingGroup>();
  for (const figure of FIGURES) {
    const reason = missing?.[figure];
    if (!reason || reason.reason === "no_traffic" || reason.reason === "not_applicable") continue;
    const key = groupKey(reason);
    const variable = reason.reason === "format_lacks_field" ? variableName(reason.variable) : null;
    const group = groups.get(key);
    if (group) {
      group.figures.push(figure);
      if (variable && !group.variables.includes(variable)) group.variables.push(variable);
    } else {
      groups.set(key, { figures: [figure], reason, variables: variable ? [variable] : [] });
    }
  }
  return [...groups.values()];
}

/**
 * The host's finding that adds the variable: the one the API names by key; when the analysis
 * moved on since (a new key), a finding of the same rule about one of the formats (L-fields has
 * one per format), else any of the rule. None when the API names none.
 */
export function findingFor(reason: MissingFigure, findings: readonly Finding[]): Finding | undefined {
  if (!reason.finding_key) return undefined;
  const exact = findings.find((f) => f.key === reason.finding_key);
  if (exact || !reason.rule) return exact;
  const ofRule = findings.filter((f) => f.rule === reason.rule);
  const formats = reason.formats ?? [];
  return ofRule.find((f) => formats.includes(String(f.evidence.log_format))) ?? ofRule[0];
}
