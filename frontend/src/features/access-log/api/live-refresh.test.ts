import { describe, expect, it } from "vitest";
import { queryKeys } from "../../../lib/query-keys";
import { createRefreshGate, isLiveAccessLogKey } from "./live-refresh";

describe("live refresh of access-log views", () => {
  it("lets one refresh per host through per interval", () => {
    const gate = createRefreshGate(5_000);
    expect(gate(1, 10_000)).toBe(true);
    expect(gate(1, 12_000)).toBe(false);
    expect(gate(2, 12_000)).toBe(true);
    expect(gate(1, 15_000)).toBe(true);
  });

  it("does not stay shut when the clock steps back", () => {
    const gate = createRefreshGate(5_000);
    expect(gate(1, 10_000)).toBe(true);
    expect(gate(1, 1_000)).toBe(true);
  });

  it("refreshes the short ranges only: long ones poll", () => {
    expect(isLiveAccessLogKey(queryKeys.hosts.accessLog(1, "15m", null))).toBe(true);
    expect(isLiveAccessLogKey(queryKeys.hosts.accessLog(1, "1h", "shop"))).toBe(true);
    expect(isLiveAccessLogKey(queryKeys.hosts.accessLog(1, "24h", null))).toBe(false);
    expect(isLiveAccessLogKey(queryKeys.hosts.series(1, "1h"))).toBe(false);
  });
});
