import { QueryClient } from "@tanstack/react-query";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { queryKeys } from "../../../lib/query-keys";
import type { HostDetail, Series } from "../../../api/types";
import { fleetHost, hostDetail, series, seriesPoint } from "../../../test/factories";
import { createRefreshGate } from "../../access-log/api/live-refresh";
import { analysisKeys } from "../../config/api/keys";
import { FLEET_REFRESH_MS, createThrottle, onChangeEvent, onSample, refreshFleet } from "./live-events";

/** A client holding one cached value under each key, none of them stale yet. */
function clientWith(keys: readonly (readonly unknown[])[]): QueryClient {
  const client = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity } } });
  for (const key of keys) client.setQueryData(key, { cached: true });
  return client;
}

const invalidated = (client: QueryClient, key: readonly unknown[]) =>
  client.getQueryState(key)?.isInvalidated ?? false;

describe("live change events", () => {
  const keys = [
    queryKeys.changes.detail(5),
    queryKeys.changes.list({ hostId: 7, limit: 100 }),
    queryKeys.rollouts.detail(3),
    queryKeys.changePreview(7, 1, ["C-gzip@x"], {}),
    analysisKeys.config(7),
    analysisKeys.config(8),
  ];

  it("refetches changes and rollouts on every step, but not the engine's previews", () => {
    const client = clientWith(keys);
    onChangeEvent(client, JSON.stringify({ id: 5, host_id: 7, status: "applying", step: "test", rollout_id: 3 }));
    expect(invalidated(client, queryKeys.changes.detail(5))).toBe(true);
    expect(invalidated(client, queryKeys.changes.list({ hostId: 7, limit: 100 }))).toBe(true);
    expect(invalidated(client, queryKeys.rollouts.detail(3))).toBe(true);
    expect(invalidated(client, queryKeys.changePreview(7, 1, ["C-gzip@x"], {}))).toBe(false);
    expect(invalidated(client, analysisKeys.config(7))).toBe(false);
  });

  it("refetches the host's analysis once the change is over", () => {
    const client = clientWith(keys);
    onChangeEvent(client, JSON.stringify({ id: 5, host_id: 7, status: "verified", step: "outcome", rollout_id: null }));
    expect(invalidated(client, analysisKeys.config(7))).toBe(true);
    expect(invalidated(client, analysisKeys.config(8))).toBe(false);
  });

  it("still refreshes the changes on a payload it cannot read", () => {
    const client = clientWith(keys);
    onChangeEvent(client, "not json");
    expect(invalidated(client, queryKeys.changes.detail(5))).toBe(true);
    expect(invalidated(client, analysisKeys.config(7))).toBe(false);
  });
});

describe("live sample events and access-log views", () => {
  const keys = [
    queryKeys.hosts.accessLog(7, "15m", null),
    queryKeys.hosts.accessLog(7, "1h", "shop.example.com"),
    queryKeys.hosts.accessLog(7, "24h", null),
    queryKeys.hosts.accessLog(8, "1h", null),
  ];
  const sample = (hostId: number) => JSON.stringify({ host_id: hostId, host: fleetHost({ id: hostId }), point: seriesPoint() });

  it("refetches the host's short-range views, not its long ones nor other hosts'", () => {
    const client = clientWith(keys);
    onSample(client, sample(7), createRefreshGate());
    expect(invalidated(client, queryKeys.hosts.accessLog(7, "15m", null))).toBe(true);
    expect(invalidated(client, queryKeys.hosts.accessLog(7, "1h", "shop.example.com"))).toBe(true);
    expect(invalidated(client, queryKeys.hosts.accessLog(7, "24h", null))).toBe(false);
    expect(invalidated(client, queryKeys.hosts.accessLog(8, "1h", null))).toBe(false);
  });

  it("lets the gate hold back a refetch of the same host", () => {
    const client = clientWith(keys);
    onSample(client, sample(7), () => false);
    expect(invalidated(client, queryKeys.hosts.accessLog(7, "15m", null))).toBe(false);
  });
});

describe("a host page's samples", () => {
  it("patch the host's detail and live series in place, not another host's", () => {
    const client = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity } } });
    client.setQueryData(queryKeys.hosts.detail(7), hostDetail({ id: 7, active: 1, agent_version: "0.1.0" }));
    client.setQueryData(queryKeys.hosts.detail(8), hostDetail({ id: 8, active: 1 }));
    const ts = new Date().toISOString();
    client.setQueryData(queryKeys.hosts.series(7, "15m"), series([], { to: new Date(Date.now() - 10_000).toISOString() }));
    const event = { host_id: 7, host: { status: "up", hostname: "web-7" }, point: seriesPoint({ ts, active: 9 }) };
    onSample(client, JSON.stringify(event), () => false);
    expect(client.getQueryData<HostDetail>(queryKeys.hosts.detail(7))).toMatchObject({ active: 9, agent_version: "0.1.0" });
    expect(client.getQueryData<HostDetail>(queryKeys.hosts.detail(8))?.active).toBe(1);
    expect(client.getQueryData<Series>(queryKeys.hosts.series(7, "15m"))?.points.map((p) => p.ts)).toEqual([ts]);
  });
});

describe("fleet deltas", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("run the first call at once and merge the ones within the interval into one after it", () => {
    const run = vi.fn();
    const throttle = createThrottle(run, 2_000);
    throttle.call();
    expect(run).toHaveBeenCalledTimes(1);
    for (let second = 0; second < 5; second += 1) {
      vi.advanceTimersByTime(300);
      throttle.call();
    }
    expect(run).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(500);
    expect(run).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(10_000);
    expect(run).toHaveBeenCalledTimes(2);
    throttle.call();
    expect(run).toHaveBeenCalledTimes(3);
  });

  it("refresh the fleet at most once per interval at one delta a second for a minute", () => {
    const run = vi.fn();
    const throttle = createThrottle(run, FLEET_REFRESH_MS);
    for (let second = 0; second < 60; second += 1) {
      throttle.call();
      vi.advanceTimersByTime(1_000);
    }
    expect(run.mock.calls.length).toBeLessThanOrEqual(60_000 / FLEET_REFRESH_MS + 1);
    expect(run.mock.calls.length).toBeGreaterThanOrEqual(60_000 / FLEET_REFRESH_MS - 1);
  });

  it("stop after cancel", () => {
    const run = vi.fn();
    const throttle = createThrottle(run, 2_000);
    throttle.call();
    throttle.call();
    throttle.cancel();
    vi.advanceTimersByTime(5_000);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("invalidate the fleet lists and summary but not the label choices", () => {
    const summaryKey = [...queryKeys.fleet.all(), "summary"] as const;
    const client = clientWith([queryKeys.fleet.list([]), summaryKey, queryKeys.fleet.labels(), queryKeys.hosts.detail(7)]);
    refreshFleet(client);
    expect(invalidated(client, queryKeys.fleet.list([]))).toBe(true);
    expect(invalidated(client, summaryKey)).toBe(true);
    expect(invalidated(client, queryKeys.fleet.labels())).toBe(false);
    expect(invalidated(client, queryKeys.hosts.detail(7))).toBe(false);
  });
});
