/** The app's routes. */
import { createBrowserRouter } from "react-router";
import {
  IncidentRedirect,
  alertsPage,
  incidentDetailPage,
  newRulePage,
  ruleEditorPage,
} from "../features/alerts/routes";
import { AuditPage } from "../features/audit/components/AuditPage";
import { LoginPage } from "../features/auth/components/LoginPage";
import { changeDetailPage, changesPage, newRolloutPage, rolloutDetailPage } from "../features/changes/routes";
import { AgentsPage } from "../features/enrollment/components/AgentsPage";
import { PrometheusPage } from "../features/exposition/components/PrometheusPage";
import { TopFindingsPage } from "../features/findings/components/TopFindingsPage";
import { FleetPage } from "../features/fleet/components/FleetPage";
import { HostPage } from "../features/host/components/HostPage";
import { UsersPage } from "../features/users/components/UsersPage";
import { RequireAuth, RequireRole } from "./guards";
import { AppLayout } from "./layout";
import { NotFound } from "./not-found";

export const routes = [
  { path: "/login", element: <LoginPage /> },
  {
    element: (
      <RequireAuth>
        <AppLayout />
      </RequireAuth>
    ),
    children: [
      { index: true, element: <FleetPage /> },
      { path: "hosts/:hostId", element: <HostPage /> },
      { path: "hosts/:hostId/traffic", element: <HostPage tab="traffic" /> },
      { path: "hosts/:hostId/config", element: <HostPage tab="config" /> },
      { path: "hosts/:hostId/changes", element: <HostPage tab="changes" /> },
      { path: "findings", element: <TopFindingsPage /> },
      { path: "changes", element: changesPage },
      { path: "changes/:changeId", element: changeDetailPage },
      { path: "rollouts/:rolloutId", element: rolloutDetailPage },
      { path: "alerts", element: alertsPage("firing") },
      { path: "alerts/history", element: alertsPage("history") },
      { path: "alerts/rules", element: alertsPage("rules") },
      { path: "alerts/rules/:ruleId", element: ruleEditorPage },
      { path: "alerts/silences", element: alertsPage("silences") },
      { path: "alerts/incidents/:incidentId", element: incidentDetailPage },
      // An incident's `url` (in notifications) is /alerts/:id.
      { path: "alerts/:incidentId", element: <IncidentRedirect /> },
      {
        element: <RequireRole role="operator" />,
        children: [{ path: "rollouts/new", element: newRolloutPage }],
      },
      {
        element: <RequireRole role="admin" />,
        children: [
          { path: "settings/agents", element: <AgentsPage /> },
          { path: "settings/users", element: <UsersPage /> },
          { path: "settings/prometheus", element: <PrometheusPage /> },
          { path: "alerts/rules/new", element: newRulePage },
          { path: "alerts/channels", element: alertsPage("channels") },
          { path: "audit", element: <AuditPage /> },
        ],
      },
      { path: "*", element: <NotFound /> },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
