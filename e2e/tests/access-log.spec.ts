/** Access-log analytics: demo-cache's hit ratio and latency from real logs, the fleet's p95, and why demo-default has no latency. */
import type { Locator, Page } from "@playwright/test";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

// The agents push every 2 s; a figure needs a few intervals of traffic before it has a line, and
// the first analysis (for demo-default's finding) runs shortly after the first push.
const DATA_TIMEOUT = 60_000;
// The fleet's access-log figures are refreshed with the rollups, and the fleet list polls every 30 s.
const FLEET_TIMEOUT = 120_000;

async function openTraffic(page: Page, hostname: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("link", { name: hostname, exact: true }).click();
  await expect(page.getByRole("heading", { name: hostname, level: 1 })).toBeVisible();
  await page.getByRole("navigation", { name: "host views" }).getByRole("link", { name: "Traffic" }).click();
  await expect(page).toHaveURL(/\/hosts\/\d+\/traffic$/);
}

/** Points in an SVG path: one per move/line/curve command. */
function pointCount(d: string | null): number {
  return (d ?? "").match(/[MLC]/g)?.length ?? 0;
}

/** The most points any line of a chart has drawn. */
async function mostPoints(chart: Locator): Promise<number> {
  const paths = await chart.locator("path.recharts-line-curve").evaluateAll((els) => els.map((e) => e.getAttribute("d")));
  return Math.max(0, ...paths.map(pointCount));
}

/** A total of the Traffic tab ("hit ratio", "p95", ...) as shown. */
function total(page: Page, label: string): Locator {
  return page.getByLabel("totals over the range").getByLabel(label, { exact: true });
}

/** "87.3%" → 87.3, "<0.01%" → 0; NaN for anything else (e.g. "—"). */
function percentOf(text: string | null): number {
  const shown = (text ?? "").trim();
  if (shown === "<0.01%") return 0;
  const match = /^(\d+(?:\.\d+)?)%$/.exec(shown);
  return match ? Number(match[1]) : Number.NaN;
}

const LATENCY = /^\d+(\.\d+)? (ms|s)$/;

test("demo-cache's hit ratio and latency percentiles come from its real HITs and MISSes", async ({ page }) => {
  await openTraffic(page, "demo-cache");

  const hitChart = page.getByRole("figure", { name: "Cache hit ratio" });
  await expect(hitChart).toContainText("(HIT + STALE + UPDATING + REVALIDATED) / requests with a cache status");
  await expect.poll(() => mostPoints(hitChart), { timeout: DATA_TIMEOUT }).toBeGreaterThan(1);
  await expect(hitChart.getByText(/No data in this range|Not measured/)).toHaveCount(0);

  // The range's hit ratio: traffic repeats cacheable paths, so some requests were HITs, and
  // the first request of each path was a MISS.
  await expect(total(page, "hit ratio")).toHaveText(/^(\d+(\.\d+)?|<0\.01)%$/, { timeout: DATA_TIMEOUT });
  const ratio = percentOf(await total(page, "hit ratio").textContent());
  expect(ratio).toBeGreaterThan(0);
  expect(ratio).toBeLessThan(100);

  // Hovering the newest point shows its ratio.
  const box = await hitChart.locator("svg.recharts-surface").boundingBox();
  expect(box).not.toBeNull();
  if (box) await page.mouse.move(box.x + box.width - 20, box.y + box.height / 2);
  await expect(hitChart.locator(".recharts-tooltip-wrapper")).toContainText(/Hit ratio\s*:\s*(\d+(\.\d+)?|<0\.01)%/);

  // The cache statuses chart stacks what the ratio is made of.
  const cacheChart = page.getByRole("figure", { name: "Cache statuses per second" });
  await expect(cacheChart.locator("path.recharts-area-curve")).toHaveCount(7);
  await expect(cacheChart.getByText(/No data in this range|Not measured/)).toHaveCount(0);

  // Every percentile is a time, and they do not decrease from p50 to p99.
  const latencyChart = page.getByRole("figure", { name: "Request time percentiles" });
  await expect(latencyChart.locator("path.recharts-line-curve")).toHaveCount(4);
  await expect.poll(() => mostPoints(latencyChart), { timeout: DATA_TIMEOUT }).toBeGreaterThan(1);
  for (const label of ["p50", "p95", "p99"]) await expect(total(page, label)).toHaveText(LATENCY);
  const seconds = async (label: string) => {
    const [value, unit] = ((await total(page, label).textContent()) ?? "").split(" ");
    return Number(value) * (unit === "ms" ? 0.001 : 1);
  };
  expect(await seconds("p95")).toBeGreaterThanOrEqual(await seconds("p50"));
  expect(await seconds("p99")).toBeGreaterThanOrEqual(await seconds("p95"));
  // demo-cache's format records all it needs: no banner explains a missing figure.
  await expect(page.getByRole("region", { name: /^why .* missing$/ })).toHaveCount(0);
});

test("the fleet shows demo-cache's p95 and hit ratio, and the p95 column sorts", async ({ page }) => {
  test.setTimeout(FLEET_TIMEOUT + 30_000);
  await page.goto("/");
  const fleet = page.getByRole("table", { name: "fleet" });
  const p95 = fleet.getByRole("link", { name: /^p95 request time of demo-cache: / });
  await expect(p95).toBeVisible({ timeout: FLEET_TIMEOUT });
  await expect(p95).toHaveText(LATENCY);
  const hit = fleet.getByRole("link", { name: /^cache hit ratio of demo-cache: / });
  await expect(hit).toBeVisible();
  const ratio = percentOf(await hit.textContent());
  expect(ratio).toBeGreaterThanOrEqual(0);
  expect(ratio).toBeLessThanOrEqual(100);
  // demo-default has no cache status in its log: not measured, said on hover.
  const notMeasured = fleet.getByLabel("cache hit ratio of demo-default: not measured");
  await expect(notMeasured).toHaveText("—");
  await expect(notMeasured).toHaveAttribute("title", /^Not measured/);

  // Slowest first on the first click; hosts without $request_time (demo-default, demo-drops)
  // sort last, demo-cache first.
  await fleet.getByRole("button", { name: /^p95/ }).click();
  await expect(fleet.getByRole("columnheader", { name: /^p95/ })).toHaveAttribute("aria-sort", "descending");
  await expect(fleet.getByRole("row").nth(1).getByRole("link").first()).toHaveText(/^demo-(cache|tuned)$/);
  await expect(fleet.getByRole("row").last().getByRole("link").first()).toHaveText(/^demo-(default|drops)$/);

  await p95.click();
  await expect(page).toHaveURL(/\/hosts\/\d+\/traffic$/);
});

test("demo-default's combined format has no $request_time: the banner names it with L-fields and its diff", async ({
  page,
}) => {
  await openTraffic(page, "demo-default");

  const latencyChart = page.getByRole("figure", { name: "Request time percentiles" });
  await expect(latencyChart).toContainText("Not measured: the log format combined lacks $request_time", {
    timeout: DATA_TIMEOUT,
  });
  await expect(total(page, "p95")).toHaveText("—");

  const banner = page.getByRole("region", { name: /^why request time.* missing$/ });
  await expect(banner).toContainText("The log format combined does not record $request_time");
  const finding = banner.getByRole("group", { name: "finding L-fields" });
  await expect(finding).toContainText("log format combined has no $request_time", { timeout: DATA_TIMEOUT });
  await expect(finding.getByRole("link", { name: "Open L-fields in the Config tab" })).toHaveAttribute(
    "href",
    /\/config\?finding=L-fields/,
  );

  await finding.getByRole("button", { name: "Show the recommended change" }).click();
  const panel = finding.getByRole("region", { name: "recommended change" });
  await expect(panel.getByRole("heading", { name: "Recommended change: L-fields" })).toBeVisible();
  await expect(panel.getByLabel(/^added line \d+$/).filter({ hasText: "$request_time" }).first()).toContainText(
    "log_format",
  );

  // Status codes need only $status, which combined has: its chart draws real requests.
  const statusChart = page.getByRole("figure", { name: "Requests per second by status" });
  await expect(statusChart.getByText(/No data in this range|Not measured/)).toHaveCount(0, { timeout: DATA_TIMEOUT });
  await expect(statusChart.locator("path.recharts-area-curve").first()).toHaveAttribute("d", /C|L/);
});
