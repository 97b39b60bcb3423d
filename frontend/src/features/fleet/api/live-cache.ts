/** Pure cache updates applied when a live `sample` event arrives. */
import type { FleetHost, HostDetail, Series, SeriesPoint, TimeRange } from "../../../api/types";
import { FINAL } from "../../changes/api/types";

export const RANGE_MS: Record<TimeRange, number> = {
  "15m": 15 * 60_000,
  "1h": 3_600_000,
  "6h": 6 * 3_600_000,
  "24h": 24 * 3_600_000,
  "7d": 7 * 24 * 3_600_000,
};

/** Ranges fine-grained enough that one raw sample is one chart point. */
export const LIVE_RANGES: readonly TimeRange[] = ["15m", "1h"];

export interface SampleEvent {
  host_id: number;
  fleet_host: FleetHost;
  point: SeriesPoint;
}

/** Replace the row of that host in a fleet list; a host not in this (filtered) list stays out. */
export function applyFleetHost(list: readonly FleetHost[] | undefined, host: FleetHost): FleetHost[] | undefined {
  if (!list) return list;
  let found = false;
  const next = list.map((row) => {
    if (row.id !== host.id) return row;
    found = true;
    return host;
  });
  return found ? next : [...list];
}

/** Merge the fresh fleet figures into a cached host detail, keeping the detail-only fields. */
export function applyHostDetail(detail: HostDetail | undefined, host: FleetHost): HostDetail | undefined {
  return detail ? { ...detail, ...host } : detail;
}

/** Append a point to a cached series, dropping points that fell out of the window. */
export function appendPoint(series: Series | undefined, point: SeriesPoint, range: TimeRange): Series | undefined {
  if (!series) return series;
  const pointMs = Date.parse(point.ts);
  const last = series.points[series.points.length - 1];
  if (Number.isNaN(pointMs) || (last && Date.parse(last.ts) >= pointMs)) return series;
  const toMs = Math.max(Date.parse(series.to), pointMs);
  const fromMs = toMs - RANGE_MS[range];
  return {
    ...series,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    points: [...series.points.filter((p) => Date.parse(p.ts) >= fromMs), point],
  };
}

/** Parse an SSE `sample` payload, refusing anything without the fields the caches need. */
export function parseSampleEvent(data: string): SampleEvent | null {
  try {
    const parsed = JSON.parse(data) as Partial<SampleEvent> | null;
    if (!parsed || typeof parsed.host_id !== "number" || !parsed.fleet_host || !parsed.point) return null;
    return parsed as SampleEvent;
  } catch {
    return null;
  }
}

/** A live `change` event: where a change is now (docs/changes.md, section 4). */
export interface ChangeEvent {
  id: number;
  host_id: number;
  status: string;
  step: string | null;
  rollout_id: number | null;
  /** Nothing moves the change any more (verified, rolled back, failed, refused, ...). */
  final: boolean;
}


/** Parse an SSE `change` payload, refusing anything without a change and host id and a status. */
export function parseChangeEvent(data: string): ChangeEvent | null {
  try {
    const parsed = JSON.parse(data) as Record<string, unknown> | null;
    if (!parsed || typeof parsed.id !== "number" || typeof parsed.host_id !== "number") return null;
    if (typeof parsed.status !== "string") return null;
    return {
      id: parsed.id,
      host_id: parsed.host_id,
      status: parsed.status,
      step: typeof parsed.step === "string" ? parsed.step : null,
      rollout_id: typeof parsed.rollout_id === "number" ? parsed.rollout_id : null,
      final: FINAL.has(parsed.status),
    };
  } catch {
    return null;
  }
}
