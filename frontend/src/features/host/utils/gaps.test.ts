import { describe, expect, it } from "vitest";
import { describeGap } from "./gaps";

const gap = {
  from_seq: 1,
  to_seq: 7,
  from_ts: "2026-11-23T08:01:02Z",
  to_ts: "2026-11-23T08:02:10Z",
  reason: "spool_overflow",
  samples_lost: 7,
};

describe("describeGap", () => {
  it("names the spool overflow, the count and both ends", () => {
    const text = describeGap(gap);
    expect(text).toMatch(/^agent spool overflow: 7 samples lost between \d{4}-\d\d-\d\d \d\d:\d\d:\d\d and /);
  });

  it("says one sample, and shows an unknown reason as sent", () => {
    expect(describeGap({ ...gap, to_seq: 1, samples_lost: 1, reason: "disk_full" })).toMatch(
      /^agent dropped samples \(disk_full\): 1 sample lost between /,
    );
  });
});
