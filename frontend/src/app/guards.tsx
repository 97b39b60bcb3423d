/** Route guards: a session for every page but login, a role for the admin pages. */
import type { ReactNode } from "react";
import { Navigate, Outlet, useLocation } from "react-router";
import type { Role } from "../api/types";
import { ErrorState, Loading } from "../components/ui/states";
import { useMe } from "../features/auth/api/auth";
import { hasRole } from "../lib/roles";

/** Send visitors without a session to the login page, remembering where they were going. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const me = useMe();
  const location = useLocation();
  if (me.isPending) return <Loading what="Checking your session" />;
  if (me.isError) return <ErrorState error={me.error} title="Could not reach the server" />;
  if (!me.data) {
    return <Navigate to="/login" replace state={{ from: `${location.pathname}${location.search}` }} />;
  }
  return <>{children}</>;
}

/** Render the nested route only for users with at least `role`; say so plainly otherwise. */
export function RequireRole({ role }: { role: Role }) {
  const me = useMe();
  if (!hasRole(me.data?.role, role)) {
    return (
      <div className="state state-forbidden" role="alert">
        <strong>You need the {role} role to view this page.</strong>
        <p>You are signed in as {me.data?.role ?? "nobody"}. Ask an admin if you need access.</p>
      </div>
    );
  }
  return <Outlet />;
}
