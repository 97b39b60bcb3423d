import { describe, expect, it } from "vitest";
import type { AlertPeriod } from "../api/types";
import { SEVERITY_COLORS, alertBands } from "./alert-bands";

const t = (iso: string) => Date.parse(iso);
const FROM = t("2026-11-21T09:00:00Z");
const TO = t("2026-11-21T10:00:00Z");

function period(overrides: Partial<AlertPeriod>): AlertPeriod {
  return {
    incident_id: 1,
    rule_key: "dropped-connections",
    rule_name: "Dropped connections",
    severity: "critical",
    start: "2026-11-21T09:10:00Z",
    end: "2026-11-21T09:20:00Z",
    ...overrides,
  };
}

describe("alertBands", () => {
  it("colours each period by severity and names its rule and times in the title", () => {
    const [band] = alertBands([period({})], FROM, TO);
    expect(band).toMatchObject({
      from: t("2026-11-21T09:10:00Z"),
      to: t("2026-11-21T09:20:00Z"),
      color: SEVERITY_COLORS.critical,
      incidentId: 1,
      open: false,
      title: "Dropped connections (critical): 2026-11-21 09:10:00 – 2026-11-21 09:20:00",
    });
  });

  it("draws a period still firing to the end of the range", () => {
    const [band] = alertBands([period({ end: null, severity: "warning" })], FROM, TO);
    expect(band).toMatchObject({ to: TO, open: true, color: SEVERITY_COLORS.warning });
    expect(band?.title).toMatch(/still firing$/);
  });

  it("keeps periods overlapping the range, oldest first, and drops the others", () => {
    const bands = alertBands(
      [
        period({ incident_id: 3, start: "2026-11-21T09:40:00Z", end: null }),
        period({ incident_id: 2, start: "2026-11-21T08:00:00Z", end: "2026-11-21T08:30:00Z" }),
        period({ incident_id: 1, start: "2026-11-21T08:50:00Z", end: "2026-11-21T09:05:00Z" }),
      ],
      FROM,
      TO,
    );
    expect(bands.map((b) => b.incidentId)).toEqual([1, 3]);
  });
});
