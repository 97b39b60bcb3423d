import { describe, expect, it } from "vitest";
import { formatChangePct, formatMetric, formatWindow, readImpact } from "./impact";

const MEASURED = {
  status: "measured",
  window_s: 300,
  before: ["2026-11-21T09:55:00+00:00", "2026-11-21T10:00:00+00:00"],
  after: ["2026-11-21T10:00:00+00:00", "2026-11-21T10:05:00+00:00"],
  metrics: [
    {
      name: "rss_bytes",
      label: "nginx memory (RSS)",
      unit: "bytes",
      before: 16173875.2,
      after: 16334848,
      change_pct: 1,
      significant: true,
      statement: "nginx memory (RSS) rose from 1.61739e+07 to 1.63348e+07 (+1%)",
    },
    { name: "broken", before: "x" },
  ],
  summary: "nginx memory (RSS) rose",
  score_before: 67,
  score_after: null,
};

describe("readImpact", () => {
  it("reads the backend's impact card and drops figures it cannot read", () => {
    const impact = readImpact(MEASURED);
    expect(impact?.status).toBe("measured");
    expect(impact?.metrics.map((m) => m.name)).toEqual(["rss_bytes"]);
    expect(impact?.score_before).toBe(67);
    expect(impact?.score_after).toBeNull();
    expect(impact?.after).toEqual(["2026-11-21T10:00:00+00:00", "2026-11-21T10:05:00+00:00"]);
  });

  it("refuses a card without a known status", () => {
    expect(readImpact(null)).toBeNull();
    expect(readImpact({ status: "done" })).toBeNull();
    expect(readImpact({ status: "waiting" })?.metrics).toEqual([]);
  });
});

describe("impact formatting", () => {
  it("writes each figure in its unit", () => {
    expect(formatMetric({ unit: "bytes" }, 16334848)).toBe("15.6 MiB");
    expect(formatMetric({ unit: "%" }, 56.6667)).toBe("56.7%");
    expect(formatMetric({ unit: "req/s" }, 12.8889)).toBe("12.9/s");
    expect(formatMetric({ unit: "% of a core" }, 0.1)).toBe("0.1% of a core");
  });

  it("signs a change and says nothing of a change from zero", () => {
    expect(formatChangePct(12.5)).toBe("+12.5%");
    expect(formatChangePct(-63.9)).toBe("−63.9%");
    expect(formatChangePct(null)).toBe("—");
  });

  it("names a window in seconds, minutes or hours", () => {
    expect(formatWindow(20)).toBe("20 s");
    expect(formatWindow(300)).toBe("5 min");
    expect(formatWindow(4 * 3600)).toBe("4 h");
  });
});
