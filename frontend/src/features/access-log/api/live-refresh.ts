/**
 * Access-log views follow the host's samples: each pushed sample carries an interval of log
 * figures, so a `sample` event makes the host's views stale. The event has no log figures to
 * append (percentiles of a range cannot be updated from one interval without its sketches), so
 * the views are refetched, at most once per `minIntervalMs` per host, whatever the push rate.
 */
import type { TimeRange } from "../../../api/types";
import { LIVE_RANGES } from "../../fleet/api/live-cache";

export const ACCESS_LOG_REFRESH_MS = 5_000;

export type RefreshGate = (hostId: number, nowMs: number) => boolean;

/** A gate that lets one refresh per host through per interval. */
export function createRefreshGate(minIntervalMs: number = ACCESS_LOG_REFRESH_MS): RefreshGate {
  const last = new Map<number, number>();
  return (hostId, nowMs) => {
    const previous = last.get(hostId);
    if (previous !== undefined && nowMs - previous < minIntervalMs && nowMs >= previous) return false;
    last.set(hostId, nowMs);
    return true;
  };
}

/** Whether a query key (queryKeys.hosts.accessLog) is of a range that follows the samples. */
export function isLiveAccessLogKey(key: readonly unknown[]): boolean {
  return key[2] === "access-log" && LIVE_RANGES.includes(key[3] as TimeRange);
}
