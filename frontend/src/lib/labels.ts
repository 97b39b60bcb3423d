/** Host labels: parsing user input and the `label=key:value` filter in URLs and API calls. */
import type { Labels } from "../api/types";

export interface LabelPair {
  key: string;
  value: string;
}

export type LabelParseResult = { ok: true; pair: LabelPair } | { ok: false; error: string };

const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,62}$/;
// Same rules as the backend's label schema, so a bad label is caught before the round trip.
const VALUE_PATTERN = /^[A-Za-z0-9_.\-/:@+= ]*$/;
const MAX_VALUE_LENGTH = 128;
export const LABEL_FILTER_PARAM = "label";

/** Parse "key=value" typed by a user, saying what is wrong when it cannot be used. */
export function parseLabelInput(text: string): LabelParseResult {
  const trimmed = text.trim();
  const eq = trimmed.indexOf("=");
  if (eq < 0) return { ok: false, error: `"${trimmed}" is not key=value` };
  const key = trimmed.slice(0, eq).trim();
  const value = trimmed.slice(eq + 1).trim();
  if (!key) return { ok: false, error: "the label key is empty" };
  if (!KEY_PATTERN.test(key)) {
    return {
      ok: false,
      error: `label key "${key}" must start with a letter or digit and use only letters, digits, _ . - /`,
    };
  }
  if (!value) return { ok: false, error: `label "${key}" has no value` };
  if (value.length > MAX_VALUE_LENGTH) {
    return { ok: false, error: `label "${key}" value is longer than ${MAX_VALUE_LENGTH} characters` };
  }
  if (!VALUE_PATTERN.test(value)) {
    return {
      ok: false,
      error: `label "${key}" value may use only letters, digits, spaces and _ . - / : @ + =`,
    };
  }
  return { ok: true, pair: { key, value } };
}

/** Parse a comma- or newline-separated list of key=value into labels, or the first error. */
export function parseLabelList(text: string): { ok: true; labels: Labels } | { ok: false; error: string } {
  const labels: Labels = {};
  for (const item of text.split(/[,\n]/)) {
    if (!item.trim()) continue;
    const parsed = parseLabelInput(item);
    if (!parsed.ok) return parsed;
    if (parsed.pair.key in labels) return { ok: false, error: `label "${parsed.pair.key}" is given twice` };
    labels[parsed.pair.key] = parsed.pair.value;
  }
  return { ok: true, labels };
}

/** The API and URL form of one filter term: "env:prod". */
export function formatLabelFilter(pair: LabelPair): string {
  return `${pair.key}:${pair.value}`;
}

/** Parse one "key:value" filter term; the value may itself contain colons. */
export function parseLabelFilterTerm(term: string): LabelPair | null {
  const colon = term.indexOf(":");
  if (colon <= 0) return null;
  const key = term.slice(0, colon).trim();
  const value = term.slice(colon + 1).trim();
  if (!KEY_PATTERN.test(key) || !value) return null;
  return { key, value };
}

/** The label filter held in a URL query, without duplicates or malformed terms. */
export function parseLabelFilter(params: URLSearchParams): LabelPair[] {
  const seen = new Set<string>();
  const pairs: LabelPair[] = [];
  for (const term of params.getAll(LABEL_FILTER_PARAM)) {
    const pair = parseLabelFilterTerm(term);
    if (!pair) continue;
    const canonical = formatLabelFilter(pair);
    if (seen.has(canonical)) continue;
    seen.add(canonical);
    pairs.push(pair);
  }
  return pairs;
}

/** A copy of the URL query with one label filter added, or removed when already present. */
export function toggleLabelFilter(params: URLSearchParams, pair: LabelPair): URLSearchParams {
  const current = parseLabelFilter(params);
  const target = formatLabelFilter(pair);
  const present = current.some((p) => formatLabelFilter(p) === target);
  const next = new URLSearchParams(params);
  next.delete(LABEL_FILTER_PARAM);
  const pairs = present ? current.filter((p) => formatLabelFilter(p) !== target) : [...current, pair];
  for (const p of pairs) next.append(LABEL_FILTER_PARAM, formatLabelFilter(p));
  return next;
}

/** Labels sorted by key, for stable display. */
export function labelEntries(labels: Labels | null | undefined): LabelPair[] {
  return Object.entries(labels ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => ({ key, value }));
}
