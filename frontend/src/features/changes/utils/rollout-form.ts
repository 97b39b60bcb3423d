/** The rollout form's values, their validation and the POST /rollouts body they become. */
import { parseLabelInput } from "../../../lib/labels";
import type { RolloutCreate } from "../api/types";

/** Figures the metric gate may watch for a rise (app/changes/schemas.py GateFigure). */
export const GATE_FIGURES = [
  { name: "waiting_share", label: "Waiting share of Active" },
  { name: "worker_cpu_pct", label: "nginx workers' CPU" },
  { name: "rss_bytes", label: "nginx memory (RSS)" },
] as const;

export type GateFigure = (typeof GATE_FIGURES)[number]["name"];

export interface RolloutFormValues {
  rule: string;
  /** "env=prod, role=edge": hosts with every key; a key given twice matches either value. */
  labels: string;
  canary: string;
  batchSize: string;
  autoRollback: boolean;
  drops: boolean;
  maxRise: Record<GateFigure, string>;
  checks: string;
  watchS: string;
  comment: string;
}

export type RolloutFormField = "rule" | "labels" | "canary" | "batchSize" | "checks" | "watchS" | GateFigure;
export type RolloutFormErrors = Partial<Record<RolloutFormField, string>>;

export function emptyRolloutForm(rule = ""): RolloutFormValues {
  return {
    rule,
    labels: "",
    canary: "1",
    batchSize: "5",
    autoRollback: false,
    drops: true,
    maxRise: { waiting_share: "", worker_cpu_pct: "", rss_bytes: "" },
    checks: "3",
    watchS: "300",
    comment: "",
  };
}

/** "env=prod, env=staging, role=edge" → {env: ["prod", "staging"], role: ["edge"]}, or the first error. */
export function parseLabelSelector(
  text: string,
): { ok: true; labels: Record<string, string[]> } | { ok: false; error: string } {
  const labels: Record<string, string[]> = {};
  for (const item of text.split(/[,\n]/)) {
    if (!item.trim()) continue;
    const parsed = parseLabelInput(item);
    if (!parsed.ok) return parsed;
    const values = (labels[parsed.pair.key] ??= []);
    if (!values.includes(parsed.pair.value)) values.push(parsed.pair.value);
  }
  return { ok: true, labels };
}

function wholeNumber(text: string, min: number, max: number, what: string): { value: number } | { error: string } {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return { error: `${what} must be a whole number` };
  const value = Number(trimmed);
  if (value < min || value > max) return { error: `${what} must be between ${min} and ${max}` };
  return { value };
}

export type RolloutFormResult = { ok: true; body: Required<RolloutCreate> } | { ok: false; errors: RolloutFormErrors };

/** Check every field, naming what is wrong in words; the body when all is well. */
export function validateRolloutForm(values: RolloutFormValues): RolloutFormResult {
  const errors: RolloutFormErrors = {};
  const rule = values.rule.trim();
  if (!rule) errors.rule = "name the rule whose fix to roll out, e.g. G-off";
  else if (rule.length > 64) errors.rule = "a rule id is at most 64 characters";

  const labels = parseLabelSelector(values.labels);
  if (!labels.ok) errors.labels = labels.error;

  const canary = wholeNumber(values.canary, 1, 10, "the canary count");
  if ("error" in canary) errors.canary = canary.error;
  const batch = wholeNumber(values.batchSize, 1, 1000, "the batch size");
  if ("error" in batch) errors.batchSize = batch.error;

  let autoRollback: RolloutCreate["auto_rollback"] = null;
  if (values.autoRollback) {
    const checks = wholeNumber(values.checks, 1, 20, "the number of checks");
    if ("error" in checks) errors.checks = checks.error;
    const watch = wholeNumber(values.watchS, 30, 86_400, "the watch time in seconds");
    if ("error" in watch) errors.watchS = watch.error;
    const maxRise: Record<string, number> = {};
    for (const { name } of GATE_FIGURES) {
      const text = values.maxRise[name].trim();
      if (!text) continue;
      const pct = Number(text);
      if (!Number.isFinite(pct) || pct <= 0 || pct > 10_000) {
        errors[name] = "a rise limit is a percentage above 0 and at most 10000";
      } else {
        maxRise[name] = pct;
      }
    }
    if ("value" in checks && "value" in watch) {
      autoRollback = { drops: values.drops, max_rise_pct: maxRise, checks: checks.value, watch_s: watch.value };
    }
  }

  if (Object.keys(errors).length > 0 || !labels.ok || "error" in canary || "error" in batch) {
    return { ok: false, errors };
  }
  return {
    ok: true,
    body: {
      rule,
      labels: labels.labels,
      canary: canary.value,
      batch_size: batch.value,
      auto_rollback: autoRollback,
      comment: values.comment.trim(),
    },
  };
}
