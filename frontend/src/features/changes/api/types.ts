/** Shapes of the changes API (docs/changes.md, section 4), named from the generated OpenAPI schema. */
import type { components } from "../../../api/schema";
import type { ChangeStatus } from "../../../api/types";

export type { ChangeStatus };

type Schemas = components["schemas"];

export type Proposal = Schemas["Proposal"];
export type ProposalEdit = Schemas["ProposalEdit"];
export type ProposalRequest = Required<Schemas["ProposalRequest"]>;
export type ChangeCreate = Required<Schemas["ChangeCreate"]>;
export type Change = Schemas["ChangeRead"];
export type ChangeDetail = Schemas["ChangeDetail"];
export type ChangeEvent = Schemas["ChangeEventRead"];
export type ChangePage = Schemas["ChangePage"];
export type Rollout = Schemas["RolloutRead"];
export type RolloutHost = Schemas["RolloutHost"];
export type RolloutCreate = Schemas["RolloutCreate"];
export type AutoRollback = Schemas["AutoRollback"];

/** Edit id (e1, e2, ...) → the arguments the operator chose. */
export type Overrides = Record<string, string[]>;

/** Where a change is: proposed or approved by a person, then the agent's steps, then an outcome. */
export const CHANGE_STATUSES: readonly ChangeStatus[] = [
  "proposed",
  "approved",
  "sent",
  "applying",
  "verified",
  "rolled_back",
  "failed",
  "refused",
  "rejected",
  "superseded",
];

/** Between approval and the agent's outcome: the UI follows these live (and polls as a fallback). */
export const IN_FLIGHT: ReadonlySet<string> = new Set(["approved", "sent", "applying"]);

/** Nothing moves a change in one of these any more. */
export const FINAL: ReadonlySet<string> = new Set([
  "verified",
  "rolled_back",
  "failed",
  "refused",
  "rejected",
  "superseded",
]);

/** The one figure of an impact card, as app/changes/impact.py writes it. */
export interface ImpactMetric {
  name: string;
  label: string;
  unit: string;
  before: number;
  after: number;
  change_pct: number | null;
  significant: boolean;
  statement: string;
}

/** A change's measured effect (null until verified); `impact` is a free-form object in the schema. */
export interface Impact {
  status: "waiting" | "measured" | "insufficient_data";
  window_s: number;
  before: [string, string];
  after: [string, string];
  metrics: ImpactMetric[];
  summary: string;
  score_before: number | null;
  score_after: number | null;
}
