/** Settings → Agents: enrol nginx hosts. */
import { CreateTokenForm } from "./CreateTokenForm";
import { TokenList } from "./TokenList";

export function AgentsPage() {
  return (
    <section aria-labelledby="agents-title">
      <header className="page-header">
        <h1 id="agents-title">Agents</h1>
      </header>
      <p className="muted">
        An enrolment token lets an agent register its host once. The agent then gets its own host token and pushes
        metrics every 10 seconds over outbound HTTPS.
      </p>
      <h2>New enrolment token</h2>
      <CreateTokenForm />
      <h2>Enrolment tokens</h2>
      <TokenList />
    </section>
  );
}
