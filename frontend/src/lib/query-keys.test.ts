import { describe, expect, it } from "vitest";
import { queryKeys } from "./query-keys";

describe("query keys", () => {
  it("gives the same fleet key whatever the label order", () => {
    expect(queryKeys.fleet.list(["role:edge", "env:prod"])).toEqual(queryKeys.fleet.list(["env:prod", "role:edge"]));
    expect(queryKeys.fleet.list(["env:prod"])).not.toEqual(queryKeys.fleet.list(["env:dev"]));
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
    expect(startsWith(queryKeys.audit.list(100), queryKeys.audit.all())).toBe(true);
  });
});
