/** The alerting pages, loaded when first opened. */
import { type ReactNode, Suspense, lazy } from "react";
import { Navigate, useParams } from "react-router";
import { Loading } from "../../components/ui/states";
import type { AlertsTab } from "./components/AlertsPage";

const AlertsPage = lazy(() => import("./components/AlertsPage"));
const IncidentDetailPage = lazy(() => import("./components/IncidentDetailPage"));
const RuleEditorPage = lazy(() => import("./components/RuleEditorPage"));

/** Notifications link to /alerts/:id (the incident's `url`); the page lives at /alerts/incidents/:id. */
export function IncidentRedirect() {
  const { incidentId } = useParams();
  return <Navigate to={`/alerts/incidents/${incidentId ?? ""}`} replace />;
}

function Page({ children }: { children: ReactNode }) {
  return <Suspense fallback={<Loading what="Loading the page" />}>{children}</Suspense>;
}

export const alertsPage = (tab: AlertsTab) => (
  <Page>
    <AlertsPage tab={tab} />
  </Page>
);
export const incidentDetailPage = (
  <Page>
    <IncidentDetailPage />
  </Page>
);
export const ruleEditorPage = (
  <Page>
    <RuleEditorPage />
  </Page>
);
export const newRulePage = (
  <Page>
    <RuleEditorPage isNew />
  </Page>
);
