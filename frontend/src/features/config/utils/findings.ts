/** Filtering, grouping and per-line placement of a config's findings. */
import type { Finding, Severity } from "../api/types";

export const SEVERITIES: readonly Severity[] = ["error", "warning", "info"];

const SEVERITY_RANK: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

export interface FindingFilter {
  severities: ReadonlySet<Severity>;
  showMuted: boolean;
}

/** Findings of the selected severities; muted ones only when asked for. */
export function filterFindings(findings: readonly Finding[], filter: FindingFilter): Finding[] {
  return findings.filter((f) => filter.severities.has(f.severity) && (filter.showMuted || !f.muted));
}

/** Worst first, then by file and line, so the list reads top-down within each severity. */
export function compareFindings(a: Finding, b: Finding): number {
  return (
    SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
    a.file.localeCompare(b.file) ||
    a.line - b.line ||
    a.rule.localeCompare(b.rule)
  );
}

export interface CategoryGroup {
  category: string;
  findings: Finding[];
}

/** Findings grouped by category; categories with the worst findings come first. */
export function groupByCategory(findings: readonly Finding[]): CategoryGroup[] {
  const groups = new Map<string, Finding[]>();
  for (const finding of [...findings].sort(compareFindings)) {
    const group = groups.get(finding.category);
    if (group) group.push(finding);
    else groups.set(finding.category, [finding]);
  }
  return [...groups.entries()].map(([category, list]) => ({ category, findings: list }));
}

/** The worst severity among findings (undefined for none). */
export function worstSeverity(findings: readonly Finding[]): Severity | undefined {
  let worst: Severity | undefined;
  for (const f of findings) {
    if (worst === undefined || SEVERITY_RANK[f.severity] < SEVERITY_RANK[worst]) worst = f.severity;
  }
  return worst;
}

/** How many findings of each severity, muted ones only when asked for (the filter buttons' figures). */
export function countBySeverity(findings: readonly Finding[], showMuted: boolean): Record<Severity, number> {
  const counts: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  for (const f of findings) if (showMuted || !f.muted) counts[f.severity] += 1;
  return counts;
}

export interface LineMarker {
  line: number;
  severity: Severity;
  findings: Finding[];
  /** Every finding at this line is muted: the marker is drawn faded. */
  muted: boolean;
}

/**
 * One gutter marker per line of `file` that has findings, coloured by the worst one there.
 * Lines outside the file (1..lineCount) are clamped to its ends so nothing disappears.
 */
export function markersForFile(findings: readonly Finding[], file: string, lineCount: number): Map<number, LineMarker> {
  const byLine = new Map<number, Finding[]>();
  const last = Math.max(1, lineCount);
  for (const f of findings) {
    if (f.file !== file) continue;
    const line = Math.min(Math.max(1, f.line), last);
    const list = byLine.get(line);
    if (list) list.push(f);
    else byLine.set(line, [f]);
  }
  const markers = new Map<number, LineMarker>();
  for (const [line, list] of byLine) {
    const active = list.filter((f) => !f.muted);
    markers.set(line, {
      line,
      severity: worstSeverity(active.length ? active : list) ?? "info",
      findings: [...list].sort(compareFindings),
      muted: active.length === 0,
    });
  }
  return markers;
}

/** How many findings point into each file (muted ones excluded). */
export function countByFile(findings: readonly Finding[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const f of findings) if (!f.muted) counts.set(f.file, (counts.get(f.file) ?? 0) + 1);
  return counts;
}
