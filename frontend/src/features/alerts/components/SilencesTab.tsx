/** Silences: active ones (expired on request), who made them and why; operators add and expire them. */
import { useState } from "react";
import { useSearchParams } from "react-router";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime, formatDuration } from "../../../lib/format";
import { useNow } from "../../../lib/use-now";
import { useAlertRules, useExpireSilence, useSilences } from "../api/alerts";
import type { Silence } from "../api/types";
import { matcherText, newSilenceDraft } from "../utils/silence-form";
import { SilenceForm } from "./SilenceForm";

/** "1h59m left" of an active silence. */
function timeLeft(endsAt: string, now: number): string {
  const seconds = (Date.parse(endsAt) - now) / 1000;
  return seconds > 0 ? `${formatDuration(seconds, 2)} left` : "ending";
}

function SilenceTable({ silences, canWrite }: { silences: readonly Silence[]; canWrite: boolean }) {
  const expire = useExpireSilence();
  const now = useNow(30_000);
  return (
    <>
      {expire.error ? <ErrorState error={expire.error} title="Could not expire the silence" /> : null}
      <div className="table-wrap">
        <table className="data-table" aria-label="silences">
          <thead>
            <tr>
              <th scope="col">Silence</th>
              <th scope="col">Rule</th>
              <th scope="col">Matchers</th>
              <th scope="col">Ends</th>
              <th scope="col">Reason</th>
              <th scope="col">Created by</th>
              <th scope="col">State</th>
              {canWrite ? (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {silences.map((silence) => (
              <tr key={silence.id}>
                <td>#{silence.id}</td>
                <td>{silence.rule_key ?? <span className="muted">any rule</span>}</td>
                <td>
                  {silence.matchers.length === 0 ? (
                    <span className="muted">every host</span>
                  ) : (
                    <ul className="chips" aria-label="matchers">
                      {silence.matchers.map((m) => (
                        <li key={matcherText(m)} className="chip">
                          {matcherText(m)}
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
                <td className="nowrap" title={`from ${formatDateTime(silence.starts_at)}`}>
                  {formatDateTime(silence.ends_at)}
                  {silence.active ? (
                    <span className="muted"> ({timeLeft(silence.ends_at, now)})</span>
                  ) : null}
                </td>
                <td>{silence.reason}</td>
                <td className="nowrap">
                  {silence.created_by} <span className="muted">{formatDateTime(silence.created_at)}</span>
                </td>
                <td>{silence.active ? "active" : <span className="muted">expired</span>}</td>
                {canWrite ? (
                  <td>
                    {silence.active ? (
                      <button
                        type="button"
                        className="small danger"
                        disabled={expire.isPending}
                        aria-label={`Expire silence ${silence.id} now`}
                        onClick={() => expire.mutate(silence.id)}
                      >
                        Expire now
                      </button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

export function SilencesTab({ canWrite }: { canWrite: boolean }) {
  const [showExpired, setShowExpired] = useState(false);
  const silences = useSilences(showExpired);
  const rules = useAlertRules();
  const [params] = useSearchParams();
  // A link from an incident ("Silence…") names its rule and host.
  const initial = newSilenceDraft({ ruleId: params.get("rule") ?? undefined, host: params.get("host") ?? undefined });

  return (
    <>
      {canWrite ? (
        <>
          <h2>New silence</h2>
          {rules.isError ? <ErrorState error={rules.error} title="Could not load the rules" /> : null}
          <SilenceForm key={params.toString()} rules={rules.data ?? []} initial={initial} />
        </>
      ) : null}
      <div className="section-head">
        <h2>{showExpired ? "All silences" : "Active silences"}</h2>
        <label className="inline-label">
          <input type="checkbox" checked={showExpired} onChange={(e) => setShowExpired(e.target.checked)} />
          Show expired
        </label>
      </div>
      {silences.isPending ? <Loading what="Loading silences" /> : null}
      {silences.isError ? <ErrorState error={silences.error} title="Could not load the silences" /> : null}
      {silences.data && silences.data.length === 0 ? (
        <EmptyState>{showExpired ? "No silence yet." : "No active silence: every alert notifies."}</EmptyState>
      ) : null}
      {silences.data && silences.data.length > 0 ? (
        <SilenceTable silences={silences.data} canWrite={canWrite} />
      ) : null}
    </>
  );
}
