/** The app's routes. */
import { createBrowserRouter } from "react-router";
import { AuditPage } from "../features/audit/components/AuditPage";
import { LoginPage } from "../features/auth/components/LoginPage";
import { changeDetailPage, changesPage, newRolloutPage, rolloutDetailPage } from "../features/changes/routes";
import { AgentsPage } from "../features/enrollment/components/AgentsPage";
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
      {
        element: <RequireRole role="operator" />,
        children: [{ path: "rollouts/new", element: newRolloutPage }],
      },
      {
        element: <RequireRole role="admin" />,
        children: [
          { path: "settings/agents", element: <AgentsPage /> },
          { path: "settings/users", element: <UsersPage /> },
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
