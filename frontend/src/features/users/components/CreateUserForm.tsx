/** Form that adds a user with a role. */
import { type FormEvent, useState } from "react";
import type { Role } from "../../../api/types";
import { ROLES } from "../../../lib/roles";
import { MIN_PASSWORD_LENGTH, useCreateUser } from "../api/users";

export function CreateUserForm() {
  const create = useCreateUser();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [formError, setFormError] = useState<string | null>(null);

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!username.trim()) {
      setFormError("Username is required");
      return;
    }
    if (password.length < MIN_PASSWORD_LENGTH) {
      setFormError(`Password must be at least ${MIN_PASSWORD_LENGTH} characters`);
      return;
    }
    setFormError(null);
    // Fields are cleared only after the server accepted the user, so a rejected form keeps its input.
    create.mutate(
      { username: username.trim(), password, role },
      {
        onSuccess: () => {
          setUsername("");
          setPassword("");
          setRole("viewer");
        },
      },
    );
  };

  const error = formError ?? create.error?.message ?? null;
  return (
    <form className="card form-grid" onSubmit={onSubmit} aria-label="create user">
      <label>
        Username
        <input autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} />
      </label>
      <label>
        Password
        <input
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      {error ? (
        <p role="alert" className="form-error">
          {error}
        </p>
      ) : null}
      <div>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create user"}
        </button>
      </div>
    </form>
  );
}
