import { describe, expect, it } from "vitest";
import {
  MISSING,
  formatAxisTime,
  formatBytes,
  formatCompact,
  formatCount,
  formatDateTime,
  formatDuration,
  formatLatency,
  formatMeasure,
  formatPercent,
  formatRate,
  formatRatio,
  formatRelativeTime,
  formatSpan,
  formatUsage,
} from "./format";

describe("numbers and units", () => {
  it("shows missing values as a dash, never as zero", () => {
    for (const fmt of [formatCompact, formatCount, formatRate, formatPercent, formatBytes]) {
      expect(fmt(null)).toBe(MISSING);
      expect(fmt(undefined)).toBe(MISSING);
      expect(fmt(Number.NaN)).toBe(MISSING);
    }
    expect(formatUsage(null, 1024)).toBe(MISSING);
  });

  it("compacts large counts and keeps small ones readable", () => {
    expect(formatCompact(0)).toBe("0");
    expect(formatCompact(7)).toBe("7");
    expect(formatCompact(0.25)).toBe("0.25");
    expect(formatCompact(12.345)).toBe("12.3");
    expect(formatCompact(9999)).toBe("9,999");
    expect(formatCompact(12_500)).toBe("12.5k");
    expect(formatCompact(3_400_000)).toBe("3.4M");
  });

  it("formats rates per second", () => {
    expect(formatRate(0)).toBe("0/s");
    expect(formatRate(1.5)).toBe("1.5/s");
    expect(formatRate(25_000)).toBe("25k/s");
  });

  it("formats percentages with a fixed number of decimals", () => {
    expect(formatPercent(12.345)).toBe("12.3%");
    expect(formatPercent(100)).toBe("100.0%");
    expect(formatPercent(42.6, 0)).toBe("43%");
  });

  it("formats bytes with binary units", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(25_769_803_776)).toBe("24 GiB");
  });

  it("formats counts and fd usage with separators", () => {
    expect(formatCount(1234.4)).toBe("1,234");
    expect(formatUsage(40, 1024)).toBe("40 / 1,024");
    expect(formatUsage(40, null)).toBe("40");
  });
});

describe("times", () => {
  const now = Date.parse("2026-11-21T10:00:00Z");
  const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();

  it("says how long ago, in growing units", () => {
    expect(formatRelativeTime(ago(2), now)).toBe("just now");
    expect(formatRelativeTime(ago(42), now)).toBe("42 s ago");
    expect(formatRelativeTime(ago(5 * 60 + 10), now)).toBe("5 min ago");
    expect(formatRelativeTime(ago(3 * 3600), now)).toBe("3 h ago");
    expect(formatRelativeTime(ago(4 * 86400), now)).toBe("4 d ago");
  });

  it("treats small clock skew as now and handles missing or bad input", () => {
    expect(formatRelativeTime(ago(-3), now)).toBe("just now");
    expect(formatRelativeTime(ago(-3600), now)).toBe("in the future");
    expect(formatRelativeTime(null, now)).toBe("never");
    expect(formatRelativeTime("not a time", now)).toBe(MISSING);
  });

  it("formats date-times and axis ticks in local time", () => {
    // The test setup pins TZ=UTC.
    expect(formatDateTime("2026-11-21T09:04:05Z")).toBe("2026-11-21 09:04:05");
    expect(formatDateTime(null)).toBe(MISSING);
    const ms = Date.parse("2026-11-21T09:04:00Z");
    expect(formatAxisTime(ms, 3600_000)).toBe("09:04");
    expect(formatAxisTime(ms, 7 * 86400_000)).toBe("11-21 09:04");
  });
});

describe("access-log figures", () => {
  it("shows a missing ratio or latency as a dash, and a measured zero as zero", () => {
    for (const fmt of [formatRatio, formatLatency]) {
      expect(fmt(null)).toBe(MISSING);
      expect(fmt(undefined)).toBe(MISSING);
      expect(fmt(Number.NaN)).toBe(MISSING);
    }
    expect(formatRatio(0)).toBe("0%");
    expect(formatLatency(0)).toBe("0 ms");
  });

  it("shows ratios of 0–1 as percentages, small shares with two decimals", () => {
    expect(formatRatio(1)).toBe("100.0%");
    expect(formatRatio(0.8734)).toBe("87.3%");
    expect(formatRatio(0.8734, 0)).toBe("87%");
    expect(formatRatio(0.0004)).toBe("0.04%");
    expect(formatRatio(0.000_001)).toBe("<0.01%");
  });

  it("shows seconds as milliseconds below a second and seconds above", () => {
    expect(formatLatency(0.0005)).toBe("0.5 ms");
    expect(formatLatency(0.001)).toBe("1 ms");
    expect(formatLatency(0.01234)).toBe("12.3 ms");
    expect(formatLatency(0.85)).toBe("850 ms");
    expect(formatLatency(0.9996)).toBe("1 s");
    expect(formatLatency(1.25)).toBe("1.25 s");
    expect(formatLatency(95.4)).toBe("95.4 s");
  });
});

describe("durations and measures", () => {
  it("writes durations the way the rule editor reads them", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(30)).toBe("30s");
    expect(formatDuration(120)).toBe("2m");
    expect(formatDuration(5400)).toBe("1h30m");
    expect(formatDuration(3605)).toBe("1h5s");
    expect(formatDuration(86_400)).toBe("1d");
    expect(formatDuration(null)).toBe(MISSING);
    expect(formatDuration(-1)).toBe(MISSING);
  });

  it("keeps only the largest units when asked, rounding the rest down", () => {
    expect(formatDuration(3 * 86_400 + 4 * 3600 + 5 * 60 + 7, 2)).toBe("3d4h");
    expect(formatDuration(3605, 2)).toBe("1h");
    expect(formatDuration(125.4, 2)).toBe("2m5s");
  });

  it("measures the span between two times", () => {
    expect(formatSpan("2026-11-21T10:00:00Z", "2026-11-21T11:05:30Z")).toBe("1h5m");
    expect(formatSpan("2026-11-21T10:00:00Z", null)).toBe(MISSING);
    expect(formatSpan("2026-11-21T11:00:00Z", "2026-11-21T10:00:00Z")).toBe(MISSING);
  });

  it("shows a value in its signal's unit", () => {
    expect(formatMeasure(412, "connections")).toBe("412 connections");
    expect(formatMeasure(12.5, "%")).toBe("12.5%");
    expect(formatMeasure(0.034, "ratio")).toBe("3.4%");
    expect(formatMeasure(0.85, "s")).toBe("850 ms");
    expect(formatMeasure(12_500, "req/s")).toBe("12.5k req/s");
    expect(formatMeasure(7, null)).toBe("7");
    expect(formatMeasure(null, "connections")).toBe(MISSING);
  });
});
