import { describe, expect, it } from "vitest";
import { finding } from "../../config/test/factories";
import type { MissingFigure } from "../api/types";
import { lacksField, noMissing } from "../test/factories";
import {
  describeGroup,
  describeShort,
  figuresLabel,
  findingFor,
  groupMissing,
  severityOf,
  whyEmpty,
} from "./missing";

const unreadable: MissingFigure = {
  reason: "file_unreadable",
  message: "The agent cannot read /var/log/nginx/access.log: permission denied.",
  path: "/var/log/nginx/access.log",
  file_reason: "permission denied",
};
const noMatch: MissingFigure = {
  reason: "lines_do_not_match",
  message: "No line of /var/log/nginx/access.log matches its log format main.",
  path: "/var/log/nginx/access.log",
  sample_line: '127.0.0.x - - [25/Nov/2026:10:00:00 +0000] "GET /… HTTP/1.1" 200',
  sample_format: "main",
};
const quiet: MissingFigure = { reason: "no_traffic", message: "No latency percentiles: no request was logged." };

describe("the reason a figure is missing, in words", () => {
  it("names the format and the variable it lacks", () => {
    const [group] = groupMissing(noMissing({ latency: lacksField("$request_time") }));
    expect(group?.figures).toEqual(["latency"]);
    expect(describeGroup(group!)).toBe("The log format combined does not record $request_time.");
    expect(describeShort("latency", lacksField("request_time"))).toBe("the log format combined lacks $request_time");
    expect(describeShort("latency", lacksField("$request_time", { formats: ["main", "api"] }))).toBe(
      "the log formats main and api lack $request_time",
    );
  });

  it("names the file the agent cannot read and why", () => {
    const [group] = groupMissing(noMissing({ hit_ratio: unreadable }));
    expect(describeGroup(group!)).toBe("The agent cannot read /var/log/nginx/access.log: permission denied.");
    expect(describeShort("hit_ratio", unreadable)).toBe("the agent cannot read /var/log/nginx/access.log");
  });

  it("names the format lines were matched against", () => {
    const [group] = groupMissing(noMissing({ status: noMatch }));
    expect(describeGroup(group!)).toBe("No line of /var/log/nginx/access.log matches its log format main.");
    expect(describeShort("status", noMatch)).toBe("log lines do not match the format main");
  });

  it("says when no access log is read at all", () => {
    const none: MissingFigure = { reason: "no_access_log", message: "server text" };
    const [group] = groupMissing(noMissing({ latency: none, status: none }));
    expect(group?.figures).toEqual(["latency", "status"]);
    expect(describeGroup(group!)).toMatch(/^No access log is read on this host/);
    expect(describeShort("status", none)).toBe("no access log is read on this host");
  });

  it("says per figure what no traffic means for it", () => {
    expect(describeShort("hit_ratio", quiet)).toBe("no request in this range had a cache status");
    expect(describeShort("upstream_latency", quiet)).toBe("no request in this range went to an upstream");
  });

  it("falls back to the server's sentence for a reason it does not know", () => {
    const future = { reason: "sampled_out", message: "Only 1% of requests are logged." } as unknown as MissingFigure;
    expect(describeShort("latency", future)).toBe("Only 1% of requests are logged.");
    const group = { figures: ["latency" as const], reason: future, variables: [] };
    expect(describeGroup(group)).toBe("Only 1% of requests are logged.");
  });
});

describe("grouping the banners", () => {
  it("tells one cause once, with every figure it empties, in chart order", () => {
    const groups = groupMissing(noMissing({ status: unreadable, hit_ratio: unreadable, latency: unreadable }));
    expect(groups).toHaveLength(1);
    expect(groups[0]?.figures).toEqual(["hit_ratio", "latency", "status"]);
    expect(figuresLabel(groups[0]!.figures)).toBe("Cache hit ratio, request time and status codes");
  });

  it("joins the variables one finding adds, and keeps another rule's apart", () => {
    const groups = groupMissing(
      noMissing({
        latency: lacksField("$request_time"),
        upstream_latency: lacksField("$upstream_response_time"),
        hit_ratio: lacksField("$upstream_cache_status", { rule: "C-observable", finding_id: null, finding_key: null }),
      }),
    );
    expect(groups.map((g) => g.figures)).toEqual([["hit_ratio"], ["latency", "upstream_latency"]]);
    expect(describeGroup(groups[1]!)).toBe(
      "The log format combined does not record $request_time or $upstream_response_time.",
    );
  });

  it("shows no banner for a figure that is measured or only had no traffic", () => {
    expect(groupMissing(noMissing())).toEqual([]);
    expect(groupMissing(noMissing({ latency: quiet }))).toEqual([]);
    expect(groupMissing(null)).toEqual([]);
  });

  it("warns about what a change fixes, and only informs when no finding asks for it", () => {
    expect(severityOf(lacksField("$request_time"))).toBe("warning");
    expect(severityOf(unreadable)).toBe("warning");
    expect(severityOf(lacksField("$upstream_cache_status", { rule: "C-observable", finding_key: null }))).toBe("info");
    expect(severityOf(quiet)).toBe("info");
  });
});

describe("the finding that fixes a format", () => {
  const timing = (key: string, format: string) =>
    finding({ key, rule: "L-fields", evidence: { log_format: format, builtin: format === "combined" } });
  const findings = [finding(), timing("L-fields@a", "main"), timing("L-fields@b", "combined")];

  it("is the one the API names by key", () => {
    expect(findingFor(lacksField("$request_time", { finding_key: "L-fields@a" }), findings)?.key).toBe("L-fields@a");
  });

  it("is the rule's finding about the same format when the analysis moved on", () => {
    expect(findingFor(lacksField("$request_time", { finding_key: "L-fields@old" }), findings)?.key).toBe("L-fields@b");
  });

  it("is none when the API names none", () => {
    expect(findingFor(lacksField("$request_time", { finding_key: null }), findings)).toBeUndefined();
  });
});

describe("a figure the config cannot have", () => {
  const noCache: MissingFigure = {
    reason: "not_applicable",
    message: "No location caches what it passes to an upstream, so there is no hit ratio to measure.",
  };

  it("raises no banner and says why in the chart", () => {
    expect(groupMissing({ hit_ratio: noCache, latency: null, upstream_latency: null, status: null })).toEqual([]);
    expect(describeShort("hit_ratio", noCache)).toBe("no cache is configured on this host");
    expect(severityOf(noCache)).toBe("info");
    expect(whyEmpty("hit_ratio", noCache)).toBe("Not applicable: no cache is configured on this host");
  });
});
