import { describe, expect, it } from "vitest";
import { fleetHost, hostDetail, series, seriesPoint } from "../../../test/factories";
import { type SampleEvent, appendPoint, applyHostDetail, parseChangeEvent, parseSampleEvent } from "./live-cache";

const sampleEvent = (overrides: Partial<SampleEvent> = {}): SampleEvent => ({
  host_id: 1,
  host: {
    hostname: "web-1",
    status: "down",
    status_reason: "nginx is not running",
    last_seen_at: "2026-11-21T10:00:10Z",
    nginx_version: "1.22.1",
    stub_status_available: true,
    stub_status_error: null,
  },
  point: seriesPoint({ active: 7, mem_used_bytes: 512, mem_total_bytes: 2048 }),
  ...overrides,
});

describe("applyHostDetail", () => {
  it("takes the push's status and figures and keeps the detail-only fields", () => {
    const cached = hostDetail({ agent_version: "0.1.0", active: 1, status: "up", score: 80 });
    const next = applyHostDetail(cached, sampleEvent());
    expect(next?.active).toBe(7);
    expect(next?.mem_used_pct).toBe(25);
    expect(next?.status).toBe("down");
    expect(next?.status_reason).toBe("nginx is not running");
    expect(next?.last_seen_at).toBe("2026-11-21T10:00:10Z");
    expect(next?.agent_version).toBe("0.1.0");
    expect(next?.score).toBe(80);
    expect(applyHostDetail(undefined, sampleEvent())).toBeUndefined();
  });

  it("shows no memory share without a total", () => {
    const next = applyHostDetail(hostDetail(), sampleEvent({ point: seriesPoint({ mem_total_bytes: null }) }));
    expect(next?.mem_used_pct).toBeNull();
  });
});

describe("appendPoint", () => {
  const at = (seconds: number) => new Date(Date.parse("2026-11-21T10:00:00Z") + seconds * 1000).toISOString();

  it("appends a newer point and slides the window", () => {
    const cached = series([seriesPoint({ ts: at(-15 * 60) }), seriesPoint({ ts: at(0) })], {
      from: at(-15 * 60),
      to: at(0),
    });
    const next = appendPoint(cached, seriesPoint({ ts: at(10) }), "15m");
    expect(next?.points.map((p) => p.ts)).toEqual([at(0), at(10)]);
    expect(next?.to).toBe(at(10));
    expect(next?.from).toBe(at(10 - 15 * 60));
  });

  it("ignores a point it already has or an older one", () => {
    const cached = series([seriesPoint({ ts: at(0) })], { to: at(0) });
    expect(appendPoint(cached, seriesPoint({ ts: at(0) }), "1h")).toBe(cached);
    expect(appendPoint(cached, seriesPoint({ ts: at(-10) }), "1h")).toBe(cached);
  });
});

describe("parseSampleEvent", () => {
  it("accepts a complete payload and refuses broken ones", () => {
    const payload = sampleEvent();
    expect(parseSampleEvent(JSON.stringify(payload))).toEqual(payload);
    expect(parseSampleEvent("{not json")).toBeNull();
    expect(parseSampleEvent(JSON.stringify({ host_id: "1" }))).toBeNull();
    expect(parseSampleEvent(JSON.stringify({ host_id: 1, host: {}, point: {} }))).toBeNull();
    // The former shape (a whole fleet row) is no longer understood.
    expect(parseSampleEvent(JSON.stringify({ host_id: 1, fleet_host: fleetHost(), point: seriesPoint() }))).toBeNull();
  });
});

describe("parseChangeEvent", () => {
  it("reads where a change is and whether it is over", () => {
    const applying = '{"id": 5, "host_id": 7, "status": "applying", "step": "test", "rollout_id": null}';
    expect(parseChangeEvent(applying)).toEqual({
      id: 5,
      host_id: 7,
      status: "applying",
      step: "test",
      rollout_id: null,
      final: false,
    });
    expect(parseChangeEvent('{"id": 5, "host_id": 7, "status": "rolled_back", "step": "outcome", "rollout_id": 3}'))
      .toMatchObject({ final: true, rollout_id: 3 });
  });

  it("refuses a payload without the change, its host or its status", () => {
    expect(parseChangeEvent('{"host_id": 7, "status": "verified"}')).toBeNull();
    expect(parseChangeEvent('{"id": 5, "host_id": 7}')).toBeNull();
    expect(parseChangeEvent("{")).toBeNull();
  });
});
