/** Shapes of the metrics-token API (docs/alerts.md, "Prometheus exposition"), by hand until generated. */

export interface MetricsTokenState {
  set: boolean;
  created_at: string | null;
}

/** The new token: in this reply only, never again. */
export interface MetricsTokenCreated {
  token: string;
}
