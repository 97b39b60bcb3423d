import { describe, expect, it } from "vitest";
import { fleetHost, hostDetail, series, seriesPoint } from "../../../test/factories";
import { appendPoint, applyFleetHost, applyHostDetail, parseChangeEvent, parseSampleEvent } from "./live-cache";

describe("applyFleetHost", () => {
  it("replaces the row of the host that pushed", () => {
    const list = [fleetHost({ id: 1, req_per_s: 1 }), fleetHost({ id: 2, req_per_s: 2 })];
    const next = applyFleetHost(list, fleetHost({ id: 2, req_per_s: 99 }));
    expect(next?.map((h) => h.req_per_s)).toEqual([1, 99]);
    expect(list[1]?.req_per_s).toBe(2);
  });

  it("does not add a host that the (filtered) list does not show", () => {
    const list = [fleetHost({ id: 1 })];
    expect(applyFleetHost(list, fleetHost({ id: 5 }))?.map((h) => h.id)).toEqual([1]);
    expect(applyFleetHost(undefined, fleetHost())).toBeUndefined();
  });
});

describe("applyHostDetail", () => {
  it("updates figures and keeps the detail-only fields", () => {
    const next = applyHostDetail(hostDetail({ agent_version: "0.1.0", active: 1 }), fleetHost({ active: 7 }));
    expect(next?.active).toBe(7);
    expect(next?.agent_version).toBe("0.1.0");
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
    const payload = { host_id: 1, fleet_host: fleetHost(), point: seriesPoint() };
    expect(parseSampleEvent(JSON.stringify(payload))).toEqual(payload);
    expect(parseSampleEvent("{not json")).toBeNull();
    expect(parseSampleEvent(JSON.stringify({ host_id: "1" }))).toBeNull();
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
