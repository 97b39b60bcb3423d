/** Pure cache updates and parsers of the live events (docs/live-events.md). */
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

/** The fleet-row fields a `sample` event carries (its figures are in the point). */
export type LiveHostFields = Pick<
  FleetHost,
  "hostname" | "status" | "status_reason" | "last_seen_at" | "nginx_version" | "stub_status_available" | "stub_status_error"
>;

/** A host page's `sample` event: one push of that host (docs/live-events.md). */
export interface SampleEvent {
  host_id: number;
  host: LiveHostFields;
  point: SeriesPoint;
}

/** The fleet figures of the newest sample, as a fleet row shows them. */
function figuresOf(point: SeriesPoint): Partial<FleetHost> {
  const used = point.mem_used_bytes ?? null;
  const total = point.mem_total_bytes ?? null;
  return {
    active: point.active ?? null,
    reading: point.reading ?? null,
    writing: point.writing ?? null,
    waiting: point.waiting ?? null,
    req_per_s: point.req_per_s ?? null,
    drops_per_s: point.drops_per_s ?? null,
    cpu_pct: point.cpu_pct ?? null,
    mem_used_pct: used !== null && total ? (100 * used) / total : null,
    fds_open: point.fds_open ?? null,
    fds_limit: point.fds_limit ?? null,
  };
}

/** Merge a push's status and figures into a cached host detail, keeping everything else. */
export function applyHostDetail(detail: HostDetail | undefined, event: SampleEvent): HostDetail | undefined {
  return detail ? { ...detail, ...event.host, ...figuresOf(event.point) } : detail;
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

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

/** Parse an SSE `sample` payload, refusing anything without the fields the caches need. */
export function parseSampleEvent(data: string): SampleEvent | null {
  try {
    const parsed = JSON.parse(data) as unknown;
    if (!isObject(parsed) || typeof parsed.host_id !== "number" || !isObject(parsed.host)) return null;
    if (!isObject(parsed.point) || typeof parsed.point.ts !== "string") return null;
    return parsed as unknown as SampleEvent;
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
