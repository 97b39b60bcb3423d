/** A host's page: the connections chart drawn from real samples, and the range picker. */
import type { Locator, Page } from "@playwright/test";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

const CONNECTIONS_CHART = /Active connections = Reading \+ Writing \+ Waiting/;

async function openHost(page: Page, hostname: string): Promise<Locator> {
  await page.goto("/");
  await page.getByRole("link", { name: hostname, exact: true }).click();
  await expect(page.getByRole("heading", { name: hostname, level: 1 })).toBeVisible();
  return page.getByRole("figure", { name: CONNECTIONS_CHART });
}

/** The SVG path of each stacked series (Reading, Writing, Waiting) of a chart. */
function stackedCurves(chart: Locator): Locator {
  return chart.locator("path.recharts-area-curve");
}

/** Points in an SVG path: one per move/line/curve command. */
function pointCount(d: string | null): number {
  return (d ?? "").match(/[MLC]/g)?.length ?? 0;
}

test("the connections chart plots real samples with a plausible Active value", async ({ page }) => {
  const chart = await openHost(page, "demo-tuned");
  await expect(chart).toBeVisible();
  await expect(chart.getByText("No data in this range")).toHaveCount(0);
  await expect(chart.getByText("Reading", { exact: true })).toBeVisible();
  await expect(chart.getByText("Writing", { exact: true })).toBeVisible();
  await expect(chart.getByText("Waiting (idle keepalive)")).toBeVisible();

  // Samples arrive every 2 s: wait until each series has a line through several of them.
  await expect(stackedCurves(chart)).toHaveCount(3);
  await expect
    .poll(async () => pointCount(await stackedCurves(chart).first().getAttribute("d")), { timeout: 30_000 })
    .toBeGreaterThan(2);

  // Hovering at the right edge shows the newest point; the status request itself is one
  // Writing connection, so Active is at least 1, and a loopback demo stays far below 10,000.
  const box = await chart.locator("svg.recharts-surface").boundingBox();
  expect(box).not.toBeNull();
  if (box) await page.mouse.move(box.x + box.width - 20, box.y + box.height / 2);
  const tooltip = chart.locator(".chart-tooltip");
  await expect(tooltip).toContainText(/Active: \d/);
  const shown = (await tooltip.textContent())?.match(/Active: ([\d.,]+)/)?.[1] ?? "";
  const active = Number(shown.replaceAll(",", ""));
  expect(active).toBeGreaterThanOrEqual(1);
  expect(active).toBeLessThan(10_000);
});

test("the range picker changes the URL and the chart", async ({ page }) => {
  const chart = await openHost(page, "demo-cache");
  const curve = stackedCurves(chart).first();
  await expect(curve).toHaveAttribute("d", /C|L/);
  const pickerFor = (name: string) => page.getByRole("group", { name: "time range" }).getByRole("button", { name });
  await expect(pickerFor("1 h")).toHaveAttribute("aria-pressed", "true");
  const curveWidth = async () => (await curve.boundingBox())?.width ?? 0;
  // The time axis labels are the tick labels that read as a clock time (the others are values).
  const timeAxisLabels = () =>
    chart.locator(".recharts-cartesian-axis-tick-value").filter({ hasText: /^\d\d:\d\d$/ }).allTextContents();
  const widthAtOneHour = await curveWidth();
  const labelsAtOneHour = await timeAxisLabels();
  expect(widthAtOneHour).toBeGreaterThan(0);
  expect(labelsAtOneHour.length).toBeGreaterThan(1);

  await pickerFor("15 min").click();

  await expect(page).toHaveURL(/[?&]range=15m\b/);
  await expect(pickerFor("15 min")).toHaveAttribute("aria-pressed", "true");
  await expect(pickerFor("1 h")).toHaveAttribute("aria-pressed", "false");
  // The time axis now starts 15 minutes back instead of an hour, and the same samples are
  // spread over a wider part of the chart (new samples arriving meanwhile add only a little).
  await expect.poll(timeAxisLabels).not.toEqual(labelsAtOneHour);
  expect((await timeAxisLabels())[0]).not.toBe(labelsAtOneHour[0]);
  await expect.poll(curveWidth).toBeGreaterThan(widthAtOneHour * 1.5);

  await pickerFor("24 h").click();
  await expect(page).toHaveURL(/[?&]range=24h\b/);
  await page.reload();
  await expect(pickerFor("24 h")).toHaveAttribute("aria-pressed", "true");
});
