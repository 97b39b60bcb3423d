import { QueryClient } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { queryKeys } from "../../../lib/query-keys";
import { fleetHost, seriesPoint } from "../../../test/factories";
import { createRefreshGate } from "../../access-log/api/live-refresh";
import { analysisKeys } from "../../config/api/keys";
import { onChangeEvent, onSample } from "./live-events";

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
  const sample = (hostId: number) =>
    JSON.stringify({ host_id: hostId, fleet_host: fleetHost({ id: hostId }), point: seriesPoint() });

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
