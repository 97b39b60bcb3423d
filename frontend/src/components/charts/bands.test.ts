import { describe, expect, it } from "vitest";
import { clipBands } from "./bands";

const band = (from: number, to: number) => ({ from, to, title: `${from}-${to}`, color: "#c5221f" });

describe("clipBands", () => {
  it("keeps the part of each band inside the window and drops bands outside it", () => {
    expect(clipBands([band(0, 50), band(150, 300), band(120, 130), band(300, 400)], [100, 200])).toEqual([
      { ...band(150, 300), to: 200 },
      band(120, 130),
    ]);
    expect(clipBands([band(0, 50)], [100, 200])).toEqual([]);
  });

  it("keeps a band that just started at the window's end, so a new alert is not lost", () => {
    expect(clipBands([band(200, 200)], [100, 200])).toEqual([band(200, 200)]);
  });
});
