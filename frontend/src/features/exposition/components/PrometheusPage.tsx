/** Settings → Prometheus (admin): the token a Prometheus server scrapes /metrics with. */
import { CopyButton } from "../../../components/ui/CopyButton";
import { ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime } from "../../../lib/format";
import { useCreateMetricsToken, useDeleteMetricsToken, useMetricsToken } from "../api/metrics-token";
import { metricsUrl, scrapeConfig } from "../scrape-config";

function Block({ label, text, copyLabel }: { label: string; text: string; copyLabel: string }) {
  return (
    <div className="command">
      <div className="command-label">{label}</div>
      <div className="command-row">
        <pre tabIndex={0} aria-label={label}>
          {text}
        </pre>
        <CopyButton text={text} label={copyLabel} />
      </div>
    </div>
  );
}

function CreatedToken({ token, onDone }: { token: string; onDone: () => void }) {
  const origin = window.location.origin;
  return (
    <div className="token-created" aria-label="new metrics token">
      <p className="banner banner-warning" role="alert">
        <strong>Copy the token now.</strong> It is shown only once and cannot be retrieved later; the previous token,
        if any, no longer works.
      </p>
      <Block label="Token" text={token} copyLabel="Copy the token" />
      <Block label="prometheus.yml" text={scrapeConfig(origin, token)} copyLabel="Copy the scrape config" />
      <p className="muted">
        Prometheus sends it as <code>Authorization: Bearer …</code> to <code>{metricsUrl(origin)}</code>.
      </p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

export function PrometheusPage() {
  const state = useMetricsToken();
  const create = useCreateMetricsToken();
  const remove = useDeleteMetricsToken();
  const isSet = state.data?.set ?? false;

  const onCreate = () => {
    if (isSet && !window.confirm("Rotate the metrics token? Prometheus gets 401 until it has the new one.")) return;
    create.mutate();
  };
  const onDelete = () => {
    if (!window.confirm("Delete the metrics token? /metrics then refuses every scrape.")) return;
    remove.mutate(undefined, { onSuccess: () => create.reset() });
  };

  return (
    <section aria-labelledby="prometheus-title">
      <header className="page-header">
        <h1 id="prometheus-title">Prometheus</h1>
      </header>
      <p className="muted">
        The server offers fleet figures in the Prometheus text format at <code>{metricsUrl(window.location.origin)}</code>,
        to scrapers that send its token. There is one token; making a new one replaces the old.
      </p>
      {state.isPending ? <Loading what="Loading the token's state" /> : null}
      {state.isError ? <ErrorState error={state.error} title="Could not load the token's state" /> : null}
      {state.data ? (
        <p role="status" aria-label="metrics token state">
          {state.data.set
            ? `A token is set${state.data.created_at ? ` (created ${formatDateTime(state.data.created_at)})` : ""}.`
            : "No token is set: /metrics refuses every scrape."}
        </p>
      ) : null}
      {create.data ? (
        <CreatedToken token={create.data.token} onDone={() => create.reset()} />
      ) : state.data ? (
        <div className="form-actions">
          <button type="button" className="primary" disabled={create.isPending} onClick={onCreate}>
            {isSet ? "Rotate token" : "Create token"}
          </button>{" "}
          {isSet ? (
            <button type="button" className="danger" disabled={remove.isPending} onClick={onDelete}>
              Delete token
            </button>
          ) : null}
        </div>
      ) : null}
      {create.error ? <ErrorState error={create.error} title="Could not create the token" /> : null}
      {remove.error ? <ErrorState error={remove.error} title="Could not delete the token" /> : null}
    </section>
  );
}
