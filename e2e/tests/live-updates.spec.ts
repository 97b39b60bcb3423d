/**
 * Live updates: the fleet page follows the hosts' pushes through coalesced `fleet` deltas, and a
 * host page follows its own host's samples (the demo pushes every 2 s; the fleet polls only
 * every 30 s and the 15-minute chart not at all, so a change within 20 s is the live stream's).
 */
import type { Page, Request } from "@playwright/test";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

const LIVE_WINDOW_MS = 20_000;

/** The live streams the page opened, by URL. */
function streamsOpened(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (request: Request) => {
    if (request.url().includes("/api/v1/events")) urls.push(new URL(request.url()).search);
  });
  return urls;
}

/** When the fleet row of a host says it last pushed (the exact time its "Last seen" cell holds). */
async function lastSeen(page: Page, hostname: string): Promise<string | null> {
  const row = page
    .getByRole("table", { name: "fleet" })
    .getByRole("row")
    .filter({ has: page.getByRole("link", { name: hostname, exact: true }) });
  const titles = await row.locator("td[title]").evaluateAll((cells) => cells.map((cell) => cell.getAttribute("title")));
  return titles.find((title) => /^\d{4}-\d\d-\d\dT/.test(title ?? "")) ?? null;
}

test("the fleet page shows a host's newest push as it arrives, without a reload", async ({ page }) => {
  const streams = streamsOpened(page);
  await page.goto("/");
  await expect(page.getByRole("link", { name: "demo-cache", exact: true })).toBeVisible();
  const first = await lastSeen(page, "demo-cache");
  expect(first).not.toBeNull();
  // Pushes every 2 s, a delta within 1 s, a refetch within 2 s; the fleet's own poll is 30 s.
  await expect.poll(() => lastSeen(page, "demo-cache"), { timeout: LIVE_WINDOW_MS }).not.toBe(first);
  // The fleet page follows the fleet scope: deltas, never every host's samples.
  expect(streams.length).toBeGreaterThan(0);
  expect(streams.every((search) => search === "")).toBe(true);
});

test("a host page's chart grows with its host's samples, on a stream of that host only", async ({ page }) => {
  const streams = streamsOpened(page);
  await page.goto("/");
  await page.getByRole("link", { name: "demo-tuned", exact: true }).click();
  await expect(page.getByRole("heading", { name: "demo-tuned", level: 1 })).toBeVisible();
  const hostId = new URL(page.url()).pathname.split("/")[2];
  await page.getByRole("group", { name: "time range" }).getByRole("button", { name: "15 min" }).click();
  const chart = page.getByRole("figure", { name: /Active connections = Reading \+ Writing \+ Waiting/ });
  const curve = chart.locator("path.recharts-area-curve").first();
  await expect(curve).toHaveAttribute("d", /C|L/);
  const points = async () => ((await curve.getAttribute("d")) ?? "").match(/[MLC]/g)?.length ?? 0;
  const before = await points();
  await expect.poll(points, { timeout: LIVE_WINDOW_MS }).toBeGreaterThan(before);
  await expect.poll(() => streams.at(-1)).toBe(`?host_id=${hostId}`);

  // Back on the fleet, the tab's one stream returns to the fleet scope.
  await page.getByRole("link", { name: "Fleet", exact: true }).first().click();
  await expect.poll(() => streams.at(-1)).toBe("");
});
