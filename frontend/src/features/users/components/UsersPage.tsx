/** Settings → Users: who can sign in, and with which role. */
import type { Role } from "../../../api/types";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime } from "../../../lib/format";
import { ROLES } from "../../../lib/roles";
import { useMe } from "../../auth/api/auth";
import { useDeleteUser, useUpdateUser, useUsers } from "../api/users";
import { CreateUserForm } from "./CreateUserForm";

function UserTable() {
  const users = useUsers();
  const me = useMe();
  const update = useUpdateUser();
  const remove = useDeleteUser();

  if (users.isPending) return <Loading what="Loading users" />;
  if (users.isError) return <ErrorState error={users.error} title="Could not load users" />;
  if (users.data.length === 0) return <EmptyState>No users.</EmptyState>;

  const actionError = update.error ?? remove.error;
  return (
    <>
      {actionError ? <ErrorState error={actionError} title="The change was not saved" /> : null}
      <div className="table-wrap">
        <table className="data-table" aria-label="users">
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.data.map((user) => {
              const isMe = user.id === me.data?.id;
              return (
                <tr key={user.id}>
                  <td>
                    {user.username}
                    {isMe ? <span className="muted"> (you)</span> : null}
                    {user.disabled ? <span className="role-tag"> disabled</span> : null}
                  </td>
                  <td>
                    <select
                      aria-label={`Role of ${user.username}`}
                      value={user.role}
                      disabled={update.isPending || isMe}
                      title={isMe ? "You cannot change your own role" : undefined}
                      onChange={(e) => update.mutate({ userId: user.id, body: { role: e.target.value as Role } })}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>{formatDateTime(user.created_at)}</td>
                  <td>
                    {isMe ? null : (
                      <button
                        type="button"
                        className="small danger"
                        aria-label={`Delete user ${user.username}`}
                        disabled={remove.isPending}
                        onClick={() => {
                          if (window.confirm(`Delete user ${user.username}? Their sessions end at once.`)) {
                            remove.mutate(user.id);
                          }
                        }}
                      >
                        Delete
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

export function UsersPage() {
  return (
    <section aria-labelledby="users-title">
      <header className="page-header">
        <h1 id="users-title">Users</h1>
      </header>
      <p className="muted">Viewers see the fleet; operators also edit host labels; admins manage users and agents.</p>
      <h2>New user</h2>
      <CreateUserForm />
      <h2>All users</h2>
      <UserTable />
    </section>
  );
}
