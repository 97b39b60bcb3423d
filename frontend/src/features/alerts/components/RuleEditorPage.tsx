/** A rule's page (/alerts/rules/:id, /alerts/rules/new): the editor for admins, read-only for others. */
import { Link, useParams } from "react-router";
import { ErrorState, Loading } from "../../../components/ui/states";
import { hasRole } from "../../../lib/roles";
import { useMe } from "../../auth/api/auth";
import { isForbidden, useAlertChannels, useAlertRule, useAlertSignals } from "../api/alerts";
import { NEW_RULE_DRAFT, draftFromRule } from "../utils/rule-form";
import { RuleForm } from "./RuleForm";
import "../alerts.css";

export default function RuleEditorPage({ isNew = false }: { isNew?: boolean }) {
  const { ruleId: rawId } = useParams();
  const ruleId = isNew ? 0 : Number(rawId);
  const me = useMe();
  const isAdmin = hasRole(me.data?.role, "admin");
  const rule = useAlertRule(ruleId);
  const signals = useAlertSignals();
  const channels = useAlertChannels(isAdmin);

  const crumbs = (
    <nav className="breadcrumb" aria-label="breadcrumb">
      <Link to="/alerts">Alerts</Link> / <Link to="/alerts/rules">Rules</Link> /{" "}
      {isNew ? "new" : (rule.data?.name ?? rawId)}
    </nav>
  );
  if (!isNew && (!Number.isInteger(ruleId) || ruleId <= 0)) {
    return <ErrorState error={new Error(`"${rawId ?? ""}" is not a rule id`)} title="No such rule" />;
  }
  if ((!isNew && rule.isPending) || signals.isPending || (isAdmin && channels.isPending)) {
    return (
      <>
        {crumbs}
        <Loading what="Loading the rule" />
      </>
    );
  }
  if (!isNew && rule.isError) return <ErrorState error={rule.error} title="Could not load this rule" />;
  if (signals.isError) return <ErrorState error={signals.error} title="Could not load the signals" />;
  // A channel list the server refuses (403) only hides the names; anything else is worth saying.
  const channelsError = channels.isError && !isForbidden(channels.error) ? channels.error : null;
  const stored = isNew ? undefined : rule.data;

  return (
    <section aria-labelledby="rule-title">
      {crumbs}
      <header className="page-header">
        <h1 id="rule-title">{stored ? stored.name : "New rule"}</h1>
      </header>
      {channelsError ? <ErrorState error={channelsError} title="Could not load the channels" /> : null}
      <RuleForm
        key={stored?.id ?? "new"}
        stored={stored}
        initial={stored ? draftFromRule(stored) : NEW_RULE_DRAFT}
        signals={signals.data}
        channels={isAdmin && channels.data ? channels.data : undefined}
        canEdit={isAdmin}
        canPreview={hasRole(me.data?.role, "operator")}
      />
    </section>
  );
}
