import { describe, expect, it } from "vitest";
import { queryKeys } from "./query-keys";

describe("query keys", () => {
  it("gives the same fleet key whatever the label order", () => {
    expect(queryKeys.fleet.list(["role:edge", "env:prod"])).toEqual(queryKeys.fleet.list(["env:prod", "role:edge"]));
    expect(queryKeys.fleet.list(["env:prod"])).not.toEqual(queryKeys.fleet.list(["env:dev"]));
  });

  it("gives each fleet page, sort and filter its own key under the fleet lists", () => {
    const first = queryKeys.fleet.list([], { sort: "req_per_s", order: "desc", limit: 50, offset: 0 });
    const second = queryKeys.fleet.list([], { sort: "req_per_s", order: "desc", limit: 50, offset: 50 });
    expect(first).not.toEqual(second);
    expect(first.slice(0, 2)).toEqual(queryKeys.fleet.lists());
    expect(queryKeys.fleet.summary(["env:prod"]).slice(0, 2)).toEqual([...queryKeys.fleet.all(), "summary"]);
    expect(queryKeys.fleet.summary(["b:2", "a:1"])).toEqual(queryKeys.fleet.summary(["a:1", "b:2"]));
  });

  it("does not reorder the caller's array", () => {
    const labels = ["b:2", "a:1"];
    queryKeys.fleet.list(labels);
    expect(labels).toEqual(["b:2", "a:1"]);
  });

  it("nests keys so that invalidating a prefix reaches every list and series", () => {
    const startsWith = (key: readonly unknown[], prefix: readonly unknown[]) =>
      prefix.every((part, i) => JSON.stringify(key[i]) === JSON.stringify(part));
    expect(startsWith(queryKeys.fleet.list(["env:prod"]), queryKeys.fleet.lists())).toBe(true);
    expect(startsWith(queryKeys.fleet.labels(), queryKeys.fleet.all())).toBe(true);
    expect(startsWith(queryKeys.fleet.labels(), queryKeys.fleet.lists())).toBe(false);
    expect(startsWith(queryKeys.hosts.series(7, "1h"), queryKeys.hosts.detail(7))).toBe(true);
    expect(startsWith(queryKeys.hosts.series(7, "1h"), queryKeys.hosts.detail(8))).toBe(false);
    expect(startsWith(queryKeys.hosts.accessLog(7, "1h", "shop"), queryKeys.hosts.accessLogs(7))).toBe(true);
    expect(startsWith(queryKeys.hosts.accessLog(7, "1h", null), queryKeys.hosts.accessLogs(8))).toBe(false);
    expect(startsWith(queryKeys.hosts.series(7, "1h"), queryKeys.hosts.accessLogs(7))).toBe(false);
    expect(startsWith(queryKeys.audit.list(100), queryKeys.audit.all())).toBe(true);
  });
});

describe("change query keys", () => {
  const startsWith = (key: readonly unknown[], prefix: readonly unknown[]) =>
    prefix.every((part, i) => JSON.stringify(key[i]) === JSON.stringify(part));

  it("puts every list and detail of changes under one prefix, and previews outside it", () => {
    expect(startsWith(queryKeys.changes.list({ hostId: 7 }), queryKeys.changes.lists())).toBe(true);
    expect(startsWith(queryKeys.changes.detail(5), queryKeys.changes.all())).toBe(true);
    expect(startsWith(queryKeys.changePreview(7, 1, ["a"], {}), queryKeys.changes.all())).toBe(false);
    expect(startsWith(queryKeys.rollouts.detail(3), queryKeys.rollouts.all())).toBe(true);
  });

  it("gives the same preview key whatever the order of the findings", () => {
    expect(queryKeys.changePreview(7, 1, ["b", "a"], { e1: ["on"] })).toEqual(
      queryKeys.changePreview(7, 1, ["a", "b"], { e1: ["on"] }),
    );
    expect(queryKeys.changePreview(7, 1, ["a"], {})).not.toEqual(queryKeys.changePreview(7, 2, ["a"], {}));
  });
});

describe("alert query keys", () => {
  const startsWith = (key: readonly unknown[], prefix: readonly unknown[]) =>
    prefix.every((part, i) => JSON.stringify(key[i]) === JSON.stringify(part));

  it("puts incidents, rules, silences and channels under one prefix, and rule previews outside it", () => {
    expect(startsWith(queryKeys.alerts.incidentList("active"), queryKeys.alerts.incidents())).toBe(true);
    expect(startsWith(queryKeys.alerts.incident(7), queryKeys.alerts.incidents())).toBe(true);
    expect(startsWith(queryKeys.alerts.rule(3), queryKeys.alerts.rules())).toBe(true);
    expect(startsWith(queryKeys.alerts.silenceList(true), queryKeys.alerts.silences())).toBe(true);
    expect(startsWith(queryKeys.alerts.channelDeliveries(2), queryKeys.alerts.channels())).toBe(true);
    expect(startsWith(queryKeys.alerts.summary(), queryKeys.alerts.all())).toBe(true);
    expect(startsWith(queryKeys.alertRulePreview({ threshold: 1 }), queryKeys.alerts.all())).toBe(false);
    expect(startsWith(queryKeys.alerts.periods(7, "1h"), queryKeys.hosts.detail(7))).toBe(false);
  });
});
