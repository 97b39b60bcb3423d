/** The alert rules: what each watches, when it fires, where it notifies; admins edit them. */
import { Link } from "react-router";
import { LabelChips } from "../../../components/ui/LabelChips";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { useAlertChannels, useAlertRules, useAlertSignals } from "../api/alerts";
import type { Channel, Rule, Signal } from "../api/types";
import { conditionText } from "../utils/condition";
import { SeverityTag } from "./AlertTags";

function SignalCell({ name, signals }: { name: string; signals: readonly Signal[] | undefined }) {
  const signal = signals?.find((s) => s.name === name);
  if (!signal) return <code>{name}</code>;
  return (
    <>
      {signal.title} <span className="muted">({signal.unit})</span>
    </>
  );
}

/** Channel names for admins; the others (who may not read channels) see how many there are. */
function ChannelsCell({ rule, channels }: { rule: Rule; channels: readonly Channel[] | undefined }) {
  if (rule.channel_ids.length === 0) return <span className="muted">none</span>;
  if (!channels) {
    return (
      <>
        {rule.channel_ids.length} {rule.channel_ids.length === 1 ? "channel" : "channels"}
      </>
    );
  }
  return <>{rule.channel_ids.map((id) => channels.find((c) => c.id === id)?.name ?? `#${id}`).join(", ")}</>;
}

const RULES_FILE_URL = "/api/v1/alerts/rules/file";

export function RulesTab({ isAdmin }: { isAdmin: boolean }) {
  const rules = useAlertRules();
  const signals = useAlertSignals();
  const channels = useAlertChannels(isAdmin);

  return (
    <>
      <div className="section-head">
        <h2>Rules</h2>
        {isAdmin ? (
          <span className="section-actions">
            {/* The same YAML `nginx-fleet alert-rules import` and PUT on this URL read back. */}
            <a href={RULES_FILE_URL} download="alert-rules.yaml" className="button-link secondary">
              Download rules file
            </a>{" "}
            <Link to="/alerts/rules/new" className="button-link">
              New rule
            </Link>
          </span>
        ) : (
          <span className="muted">Admins edit the rules.</span>
        )}
      </div>
      {rules.isPending ? <Loading what="Loading rules" /> : null}
      {rules.isError ? <ErrorState error={rules.error} title="Could not load the rules" /> : null}
      {rules.data && rules.data.length === 0 ? <EmptyState>No alert rule yet.</EmptyState> : null}
      {rules.data && rules.data.length > 0 ? (
        <div className="table-wrap">
          <table className="data-table" aria-label="alert rules">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Signal</th>
                <th scope="col">Condition</th>
                <th scope="col">Severity</th>
                <th scope="col">Scope</th>
                <th scope="col">Channels</th>
                <th scope="col">Enabled</th>
                {isAdmin ? (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {rules.data.map((rule) => (
                <tr key={rule.id}>
                  <td>
                    <Link to={`/alerts/rules/${rule.id}`}>{rule.name}</Link>
                    {rule.last_error ? (
                      <span className="form-error" title={rule.last_error}>
                        {" "}
                        · evaluation failed
                      </span>
                    ) : null}
                  </td>
                  <td>
                    <SignalCell name={rule.signal} signals={signals.data} />
                  </td>
                  <td className="nowrap">
                    <code>{conditionText(rule)}</code>
                  </td>
                  <td>
                    <SeverityTag severity={rule.severity} />
                  </td>
                  <td>
                    {Object.keys(rule.scope).length === 0 ? (
                      <span className="muted">every host</span>
                    ) : (
                      <LabelChips labels={rule.scope} />
                    )}
                  </td>
                  <td>
                    <ChannelsCell rule={rule} channels={channels.data} />
                  </td>
                  <td>{rule.enabled ? "yes" : <span className="muted">no</span>}</td>
                  {isAdmin ? (
                    <td>
                      <Link to={`/alerts/rules/${rule.id}`} aria-label={`Edit ${rule.name}`}>
                        Edit
                      </Link>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {signals.isError ? <ErrorState error={signals.error} title="Could not load the signals" /> : null}
    </>
  );
}
