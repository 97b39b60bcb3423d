/** Shapes of the access-log API (docs/access-log.md, section 3), named from the generated OpenAPI schema. */
import type { components } from "../../../api/schema";

type Schemas = components["schemas"];

export type HostAccessLog = Schemas["HostAccessLogRead"];
export type AccessLogFigures = Schemas["AccessLogFigures"];
export type AccessLogPoint = Schemas["AccessLogPoint"];
export type AccessLogUpstream = Schemas["UpstreamRead"];
export type AccessLogSite = Schemas["SiteRead"];
export type AccessLogFile = Schemas["AccessLogFileRead"];
export type AccessLogTopPath = Schemas["TopPathRead"];
export type MissingFigure = Schemas["MissingFigure"];
export type MissingFigures = Schemas["MissingFigures"];
export type MissingReasonCode = MissingFigure["reason"];
/** The figures whose absence the API explains. */
export type Figure = keyof MissingFigures;
