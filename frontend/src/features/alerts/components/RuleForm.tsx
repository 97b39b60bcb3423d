/** The rule editor: every field of a rule, checked as typed, with the live preview beside it. */
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router";
import { ErrorState } from "../../../components/ui/states";
import { formatDuration } from "../../../lib/format";
import { useDeleteRule, useSaveRule } from "../api/alerts";
import {
  COMPARISON_OPS,
  type Channel,
  type ComparisonOp,
  NO_DATA_POLICIES,
  type NoDataPolicy,
  type Rule,
  SEVERITIES,
  type Severity,
  type Signal,
} from "../api/types";
import { type RuleDraft, type RuleField, checkRuleDraft, previewDraft } from "../utils/rule-form";
import { RulePreviewPanel } from "./RulePreviewPanel";
import { TextField } from "./TextField";

const NO_DATA_TEXT: Record<NoDataPolicy, { label: string; hint: string }> = {
  ok: { label: "OK", hint: "a host without data counts as not matching" },
  keep: { label: "Keep state", hint: "a host without data stays as it was (firing stays firing)" },
  alerting: { label: "Alerting", hint: "a host without data counts as matching" },
  nodata: { label: "No data", hint: "the host enters the no-data state, which notifies like firing" },
};

interface RuleFormProps {
  /** The rule being edited; absent for a new one. */
  stored?: Rule;
  initial: RuleDraft;
  signals: readonly Signal[];
  /** The channels to pick from; undefined when the user may not read them. */
  channels: readonly Channel[] | undefined;
  canEdit: boolean;
  canPreview: boolean;
}

export function RuleForm({ stored, initial, signals, channels, canEdit, canPreview }: RuleFormProps) {
  const navigate = useNavigate();
  const save = useSaveRule();
  const remove = useDeleteRule();
  const [draft, setDraft] = useState<RuleDraft>(initial);
  const [touched, setTouched] = useState<ReadonlySet<RuleField>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [saved, setSaved] = useState(false);

  const signal = signals.find((s) => s.name === draft.signal);
  const check = checkRuleDraft(draft, signal);
  const preview = checkRuleDraft(previewDraft(draft), signal);
  const errorOf = (field: RuleField) =>
    !check.ok && (submitted || touched.has(field)) ? check.errors[field] : undefined;

  const set = <K extends RuleField>(field: K, value: RuleDraft[K]) => {
    setDraft((current) => ({ ...current, [field]: value }));
    setTouched((current) => new Set(current).add(field));
    setSaved(false);
  };
  const setSignal = (name: string) => {
    const chosen = signals.find((s) => s.name === name);
    // A signal's usual direction ("fewer days left" is bad) is the better start.
    setDraft((current) => ({ ...current, signal: name, op: chosen?.default_op ?? current.op }));
    setTouched((current) => new Set(current).add("signal"));
    setSaved(false);
  };
  const toggleChannel = (channelId: number, on: boolean) =>
    set("channelIds", on ? [...draft.channelIds, channelId] : draft.channelIds.filter((id) => id !== channelId));

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setSubmitted(true);
    if (!check.ok) return;
    save.mutate(
      { ruleId: stored?.id ?? null, body: check.body },
      {
        onSuccess: (rule) => {
          setSaved(true);
          if (!stored) void navigate(`/alerts/rules/${rule.id}`, { replace: true });
        },
      },
    );
  };

  const onDelete = () => {
    if (!stored) return;
    if (!window.confirm(`Delete the rule "${stored.name}"? It stops alerting at once.`)) return;
    remove.mutate(stored.id, { onSuccess: () => void navigate("/alerts/rules", { replace: true }) });
  };

  const unit = signal?.unit;
  const errorCount = check.ok ? 0 : Object.keys(check.errors).length;
  return (
    <div className="rule-layout">
      <form className="card rule-form" aria-label="rule" onSubmit={onSubmit} noValidate>
        {!canEdit ? (
          <p className="banner banner-info" role="note">
            Read only: admins edit the rules.
          </p>
        ) : null}
        {stored?.last_error ? (
          <p className="banner banner-warning">
            The last evaluation of this rule failed: {stored.last_error}
          </p>
        ) : null}
        <fieldset disabled={!canEdit}>
          <div className="field-row">
            <TextField label="Name" value={draft.name} onChange={(v) => set("name", v)} error={errorOf("name")} />
            <TextField
              label="Key"
              value={draft.key}
              onChange={(v) => set("key", v)}
              error={errorOf("key")}
              hint={stored ? "stable: notifications and silences name it" : "a slug, e.g. dropped-connections"}
              disabled={stored !== undefined}
            />
            <label className="choice">
              <input type="checkbox" checked={draft.enabled} onChange={(e) => set("enabled", e.target.checked)} />
              Enabled
            </label>
          </div>
          <div className="field-row">
            <label className="field field-wide">
              Description
              <textarea rows={2} value={draft.description} onChange={(e) => set("description", e.target.value)} />
            </label>
          </div>
          <div className="field-row">
            <label className="field field-wide">
              Signal
              <select
                value={draft.signal}
                aria-invalid={errorOf("signal") ? true : undefined}
                onChange={(e) => setSignal(e.target.value)}
              >
                <option value="">choose a signal…</option>
                {signals.map((s) => (
                  <option key={s.name} value={s.name}>
                    {s.title} ({s.unit})
                  </option>
                ))}
                {draft.signal && !signal ? <option value={draft.signal}>{draft.signal}</option> : null}
              </select>
              {signal ? (
                <span className="field-hint">
                  in {signal.unit}, computed per host over the window
                  {signal.needs_requests ? "; needs requests to mean anything" : ""}
                </span>
              ) : null}
              {errorOf("signal") ? <span className="field-error">{errorOf("signal")}</span> : null}
            </label>
          </div>
          <div className="field-row">
            <label className="field">
              Fire when the value is
              <select value={draft.op} onChange={(e) => set("op", e.target.value as ComparisonOp)}>
                {COMPARISON_OPS.map((op) => (
                  <option key={op} value={op}>
                    {op}
                  </option>
                ))}
              </select>
            </label>
            <TextField
              label="Threshold"
              value={draft.threshold}
              onChange={(v) => set("threshold", v)}
              error={errorOf("threshold")}
              hint={unit ? `in ${unit}` : undefined}
              inputMode="decimal"
            />
            <TextField
              label="Clear threshold"
              value={draft.clearThreshold}
              onChange={(v) => set("clearThreshold", v)}
              error={errorOf("clearThreshold")}
              hint="once firing, clears only back past this; empty: the threshold"
              inputMode="decimal"
            />
            {signal?.needs_requests ? (
              <TextField
                label="Min requests"
                value={draft.minRequests}
                onChange={(v) => set("minRequests", v)}
                error={errorOf("minRequests")}
                hint="fewer requests in the window count as no data"
                inputMode="numeric"
              />
            ) : null}
          </div>
          <div className="field-row">
            <TextField
              label="Window"
              value={draft.window}
              onChange={(v) => set("window", v)}
              error={errorOf("window")}
              hint={
                signal?.fixed_window_s
                  ? `this signal always covers ${formatDuration(signal.fixed_window_s)}, whatever the window`
                  : "the value is computed over it, e.g. 2m (at most 1d)"
              }
            />
            <TextField
              label="For"
              value={draft.forDuration}
              onChange={(v) => set("forDuration", v)}
              error={errorOf("forDuration")}
              hint="holds this long before firing (pending meanwhile), e.g. 1m or 0s"
            />
            <TextField
              label="Keep firing"
              value={draft.keepFiring}
              onChange={(v) => set("keepFiring", v)}
              error={errorOf("keepFiring")}
              hint="stays firing this long after the condition stops"
            />
            <TextField
              label="Repeat every"
              value={draft.repeatInterval}
              onChange={(v) => set("repeatInterval", v)}
              error={errorOf("repeatInterval")}
              hint="notify again while firing, e.g. 4h; empty: once"
            />
          </div>
          <div className="field-row">
            <label className="field">
              Severity
              <select value={draft.severity} onChange={(e) => set("severity", e.target.value as Severity)}>
                {SEVERITIES.map((severity) => (
                  <option key={severity} value={severity}>
                    {severity}
                  </option>
                ))}
              </select>
            </label>
            <TextField
              label="Scope"
              value={draft.scope}
              onChange={(v) => set("scope", v)}
              error={errorOf("scope")}
              placeholder="env=prod, role=edge"
              hint="label=value pairs that must all equal; empty: every host"
              wide
            />
          </div>
          <fieldset className="choice-group">
            <legend>A host with no data</legend>
            {NO_DATA_POLICIES.map((policy) => (
              <label key={policy} className="choice">
                <input
                  type="radio"
                  name="no_data"
                  value={policy}
                  checked={draft.noData === policy}
                  onChange={() => set("noData", policy)}
                />
                {NO_DATA_TEXT[policy].label}
                <span className="field-hint">— {NO_DATA_TEXT[policy].hint}</span>
              </label>
            ))}
          </fieldset>
          <fieldset className="choice-group">
            <legend>Channels</legend>
            {channels === undefined ? (
              <p className="muted">
                {draft.channelIds.length} {draft.channelIds.length === 1 ? "channel" : "channels"} (admins see their
                names)
              </p>
            ) : channels.length === 0 ? (
              <p className="muted">No channel yet: add one on the Channels tab.</p>
            ) : (
              channels.map((channel) => (
                <label key={channel.id} className="choice">
                  <input
                    type="checkbox"
                    checked={draft.channelIds.includes(channel.id)}
                    onChange={(e) => toggleChannel(channel.id, e.target.checked)}
                  />
                  {channel.name} <span className="field-hint">{channel.kind}</span>
                </label>
              ))
            )}
          </fieldset>
        </fieldset>
        {canEdit ? (
          <div className="form-actions">
            <button type="submit" className="primary" disabled={save.isPending}>
              {save.isPending ? "Saving…" : stored ? "Save rule" : "Create rule"}
            </button>{" "}
            {stored ? (
              <button type="button" className="danger" disabled={remove.isPending} onClick={onDelete}>
                Delete rule
              </button>
            ) : null}
          </div>
        ) : null}
        {submitted && errorCount > 0 ? (
          <p className="form-error" role="alert">
            The rule has {errorCount} {errorCount === 1 ? "problem" : "problems"}: see the fields marked above.
          </p>
        ) : null}
        {save.error ? (
          <p className="form-error" role="alert">
            Could not save the rule: {save.error.message}
          </p>
        ) : null}
        {remove.error ? <ErrorState error={remove.error} title="Could not delete the rule" /> : null}
        {saved && !save.isPending ? (
          <p className="saved-note" role="status">
            Saved.
          </p>
        ) : null}
      </form>
      {canPreview ? (
        <RulePreviewPanel body={preview.ok ? preview.body : null} unit={unit} />
      ) : (
        <p className="muted">Operators and admins see here which hosts the rule matches now.</p>
      )}
    </div>
  );
}
