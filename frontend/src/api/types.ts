/** Names for the API shapes the UI uses, taken from the generated OpenAPI schema. */
import type { components } from "./schema";

type Schemas = components["schemas"];

export type User = Schemas["UserRead"];
export type Role = Schemas["Role"];
export type UserCreate = Schemas["UserCreate"];
export type UserUpdate = Schemas["UserUpdate"];
export type FleetHost = Schemas["FleetHost"];
export type HostStatus = FleetHost["status"];
export type HostDetail = Schemas["HostDetail"];
export type Series = Schemas["SeriesRead"];
export type SeriesPoint = Schemas["SeriesPoint"];
export type SampleGap = Schemas["SampleGapRead"];
export type EnrollmentTokenCreate = Schemas["EnrollmentTokenCreate"];
export type EnrollmentTokenCreated = Schemas["EnrollmentTokenCreated"];
export type EnrollmentToken = Schemas["EnrollmentTokenRead"];
export type AuditEvent = Schemas["AuditEntryRead"];
export type ChangeStatus = Schemas["ChangeStatus"];
export type Labels = Record<string, string>;

export const TIME_RANGES = ["15m", "1h", "6h", "24h", "7d"] as const;
export type TimeRange = (typeof TIME_RANGES)[number];
