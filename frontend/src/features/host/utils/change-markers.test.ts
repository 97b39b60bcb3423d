import { describe, expect, it } from "vitest";
import { change } from "../../changes/test/factories";
import { changeMarkers } from "./change-markers";

const FROM = Date.parse("2026-11-21T09:00:00Z");
const TO = Date.parse("2026-11-21T10:00:00Z");

describe("changeMarkers", () => {
  it("marks applied and rolled-back changes in the range at their outcome, oldest first", () => {
    const marks = changeMarkers(
      [
        change({ id: 9, status: "verified", finished_at: "2026-11-21T09:40:00Z" }),
        change({ id: 8, kind: "rollback", status: "verified", finished_at: "2026-11-21T09:30:00Z" }),
        change({ id: 7, status: "rolled_back", finished_at: "2026-11-21T09:10:00Z" }),
      ],
      FROM,
      TO,
    );
    expect(marks.map((m) => [m.changeId, m.label, m.t])).toEqual([
      [7, "change 7", Date.parse("2026-11-21T09:10:00Z")],
      [8, "rollback 8", Date.parse("2026-11-21T09:30:00Z")],
      [9, "change 9", Date.parse("2026-11-21T09:40:00Z")],
    ]);
    expect(marks[0]?.color).not.toBe(marks[2]?.color);
  });

  it("leaves out changes outside the range and those that changed nothing", () => {
    const marks = changeMarkers(
      [
        change({ id: 1, status: "verified", finished_at: "2026-11-21T08:59:59Z" }),
        change({ id: 2, status: "refused", finished_at: "2026-11-21T09:30:00Z" }),
        change({ id: 3, status: "rejected", finished_at: "2026-11-21T09:30:00Z" }),
        change({ id: 4, status: "applying", finished_at: null }),
      ],
      FROM,
      TO,
    );
    expect(marks).toEqual([]);
  });
});
