import { describe, expect, it } from "vitest";
import {
  labelEntries,
  parseLabelFilter,
  parseLabelFilterTerm,
  parseLabelInput,
  parseLabelList,
  toggleLabelFilter,
} from "./labels";

describe("parseLabelInput", () => {
  it("accepts key=value and trims spaces", () => {
    expect(parseLabelInput(" env = prod ")).toEqual({ ok: true, pair: { key: "env", value: "prod" } });
    expect(parseLabelInput("url=a=b")).toEqual({ ok: true, pair: { key: "url", value: "a=b" } });
  });

  it("explains what is wrong with bad input", () => {
    const error = (text: string) => {
      const result = parseLabelInput(text);
      return result.ok ? null : result.error;
    };
    expect(error("prod")).toMatch(/not key=value/);
    expect(error("=prod")).toMatch(/key is empty/);
    expect(error("env=")).toMatch(/no value/);
    expect(error("-env=prod")).toMatch(/must start with a letter or digit/);
    expect(error("env=pr\u0007od")).toMatch(/may use only/);
    expect(error(`env=${"x".repeat(129)}`)).toMatch(/longer than 128/);
  });
});

describe("parseLabelList", () => {
  it("reads a comma or newline separated list", () => {
    expect(parseLabelList("env=prod, role=edge\nzone=a")).toEqual({
      ok: true,
      labels: { env: "prod", role: "edge", zone: "a" },
    });
    expect(parseLabelList("  ")).toEqual({ ok: true, labels: {} });
  });

  it("rejects the list at its first bad or repeated item", () => {
    expect(parseLabelList("env=prod, role")).toEqual({ ok: false, error: '"role" is not key=value' });
    expect(parseLabelList("env=prod, env=dev")).toEqual({ ok: false, error: 'label "env" is given twice' });
  });
});

describe("label filter in the URL", () => {
  it("parses key:value terms, keeping colons in values and dropping bad or repeated ones", () => {
    const params = new URLSearchParams("label=env:prod&label=url:http://x&label=bogus&label=env:prod&label=:x");
    expect(parseLabelFilter(params)).toEqual([
      { key: "env", value: "prod" },
      { key: "url", value: "http://x" },
    ]);
    expect(parseLabelFilterTerm("env:")).toBeNull();
  });

  it("toggles a filter on and off without touching other parameters", () => {
    const start = new URLSearchParams("sort=name&label=env:prod");
    const added = toggleLabelFilter(start, { key: "role", value: "edge" });
    expect(added.getAll("label")).toEqual(["env:prod", "role:edge"]);
    expect(added.get("sort")).toBe("name");
    const removed = toggleLabelFilter(added, { key: "env", value: "prod" });
    expect(removed.getAll("label")).toEqual(["role:edge"]);
    expect(start.getAll("label")).toEqual(["env:prod"]);
  });
});

describe("labelEntries", () => {
  it("lists labels sorted by key", () => {
    expect(labelEntries({ z: "1", a: "2" })).toEqual([
      { key: "a", value: "2" },
      { key: "z", value: "1" },
    ]);
    expect(labelEntries(null)).toEqual([]);
  });
});
