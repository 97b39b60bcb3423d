/** The signed-in frame: left navigation, user and logout in the header. */
import { NavLink, Outlet, useNavigate } from "react-router";
import { AlertsNavBadge } from "../features/alerts/components/AlertsNavBadge";
import { useLogout, useMe } from "../features/auth/api/auth";
import { hasRole } from "../lib/roles";

export function AppLayout() {
  const me = useMe();
  const logout = useLogout();
  const navigate = useNavigate();
  const isAdmin = hasRole(me.data?.role, "admin");

  return (
    <div className="shell">
      <nav className="sidebar" aria-label="main">
        <div className="brand">nginx-fleet</div>
        <ul>
          <li>
            <NavLink to="/" end>
              Fleet
            </NavLink>
          </li>
          <li>
            <NavLink to="/findings">Top findings</NavLink>
          </li>
          <li>
            <NavLink to="/changes">Changes</NavLink>
          </li>
          <li>
            <NavLink to="/alerts">
              Alerts <AlertsNavBadge />
            </NavLink>
          </li>
          {isAdmin ? (
            <>
              <li className="nav-section">Settings</li>
              <li>
                <NavLink to="/settings/agents">Agents</NavLink>
              </li>
              <li>
                <NavLink to="/settings/users">Users</NavLink>
              </li>
              <li>
                <NavLink to="/settings/prometheus">Prometheus</NavLink>
              </li>
              <li>
                <NavLink to="/audit">Audit</NavLink>
              </li>
            </>
          ) : null}
        </ul>
      </nav>
      <div className="main-column">
        <header className="topbar" aria-label="account">
          <span className="whoami">
            {me.data?.username} <span className="role-tag">{me.data?.role}</span>
          </span>
          <button
            type="button"
            className="small"
            disabled={logout.isPending}
            onClick={() => logout.mutate(undefined, { onSuccess: () => void navigate("/login", { replace: true }) })}
          >
            Log out
          </button>
          {logout.error ? (
            <span role="alert" className="form-error">
              {logout.error.message}
            </span>
          ) : null}
        </header>
        <main className="content">
          <Outlet />
        </main>
      </div>
    </div>
  );
}
