/** How the access-log figures are defined (docs/access-log.md, section 3), as the UI states them. */

/** STALE and UPDATING were served from the cache, REVALIDATED too after the upstream's 304. */
export const HIT_RATIO_DEFINITION = "(HIT + STALE + UPDATING + REVALIDATED) / requests with a cache status";

/** The window of the fleet list's access-log figures. */
export const FLEET_WINDOW = "the last 15 minutes";
