/** Existing enrolment tokens (no secrets) with revoke. */
import type { EnrollmentToken } from "../../../api/types";
import { LabelChips } from "../../../components/ui/LabelChips";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { formatDateTime } from "../../../lib/format";
import { useNow } from "../../../lib/use-now";
import { useEnrollmentTokens, useRevokeEnrollmentToken } from "../api/enrollment";

/** Why a token can or cannot enrol another host. */
export function tokenState(token: EnrollmentToken, now: number): string {
  if (token.revoked) return "revoked";
  if (Date.parse(token.expires_at) <= now) return "expired";
  if (token.uses >= token.max_uses) return "used up";
  return "active";
}

export function TokenList() {
  const tokens = useEnrollmentTokens();
  const revoke = useRevokeEnrollmentToken();
  const now = useNow(30_000);

  if (tokens.isPending) return <Loading what="Loading tokens" />;
  if (tokens.isError) return <ErrorState error={tokens.error} title="Could not load tokens" />;
  if (tokens.data.length === 0) return <EmptyState>No enrolment tokens yet.</EmptyState>;

  return (
    <>
      {revoke.error ? <ErrorState error={revoke.error} title="Could not revoke the token" /> : null}
      <div className="table-wrap">
        <table className="data-table" aria-label="enrolment tokens">
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col" className="num">
                Uses
              </th>
              <th scope="col">Labels</th>
              <th scope="col">State</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.data.map((token) => {
              const state = tokenState(token, now);
              return (
                <tr key={token.id}>
                  <td>{token.id}</td>
                  <td>{formatDateTime(token.created_at)}</td>
                  <td>{formatDateTime(token.expires_at)}</td>
                  <td className="num">
                    {token.uses} / {token.max_uses}
                  </td>
                  <td>
                    <LabelChips labels={token.labels} />
                  </td>
                  <td>
                    <span className={`token-state token-${state.replace(" ", "-")}`}>{state}</span>
                  </td>
                  <td>
                    {state === "active" ? (
                      <button
                        type="button"
                        className="small danger"
                        disabled={revoke.isPending}
                        aria-label={`Revoke token ${token.id}`}
                        onClick={() => {
                          if (window.confirm(`Revoke enrolment token ${token.id}? Hosts cannot enrol with it afterwards.`)) {
                            revoke.mutate(token.id);
                          }
                        }}
                      >
                        Revoke
                      </button>
                    ) : null}
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
