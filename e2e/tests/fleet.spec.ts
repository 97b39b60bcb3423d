/**
 * The fleet page lists the four demo nginx instances, each up and pushing; the server sorts,
 * filters, searches and pages them, and the view lives in the URL so a reload keeps it.
 */
import type { Locator, Page } from "@playwright/test";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

const DEMO_HOSTS = ["demo-default", "demo-tuned", "demo-cache", "demo-drops"];

/** The hostnames of the table's rows, in order. */
async function hostOrder(fleet: Locator): Promise<string[]> {
  return fleet.locator("tbody tr").evaluateAll((rows) =>
    rows.map((row) => row.querySelector("td a")?.textContent ?? ""),
  );
}

function fleetTable(page: Page): Locator {
  return page.getByRole("table", { name: "fleet" });
}

test("the fleet shows every demo host as up", async ({ page, demo }) => {
  expect(demo.hosts.sort()).toEqual([...DEMO_HOSTS].sort());
  await page.goto("/");
  const fleet = fleetTable(page);
  await expect(fleet).toBeVisible();

  for (const hostname of DEMO_HOSTS) {
    const row = fleet.getByRole("row").filter({ has: page.getByRole("link", { name: hostname, exact: true }) });
    await expect(row).toHaveCount(1);
    await expect(row.getByText("up", { exact: true })).toBeVisible();
    await expect(row.getByRole("button", { name: "env=demo" })).toBeVisible();
  }
  const summary = page.getByRole("list", { name: "fleet summary" });
  await expect(summary.locator("[data-summary=hosts] .figure")).toHaveText("4");
  await expect(summary.locator("[data-summary=up] .figure")).toHaveText("4");
});

test("a header click sorts on the server and a reload keeps the order", async ({ page }) => {
  await page.goto("/");
  const fleet = fleetTable(page);
  await expect.poll(() => hostOrder(fleet)).toEqual(["demo-cache", "demo-default", "demo-drops", "demo-tuned"]);
  const sorted = page.waitForRequest((r) => r.url().includes("/api/v1/fleet?") && r.url().includes("order=desc"));
  await fleet.getByRole("button", { name: /^Host/ }).click();
  await sorted;
  await expect(page).toHaveURL(/sort=hostname&order=desc/);
  await expect(fleet.getByRole("columnheader", { name: /^Host/ })).toHaveAttribute("aria-sort", "descending");
  await expect.poll(() => hostOrder(fleet)).toEqual(["demo-tuned", "demo-drops", "demo-default", "demo-cache"]);
  await page.reload();
  await expect.poll(() => hostOrder(fleetTable(page))).toEqual(["demo-tuned", "demo-drops", "demo-default", "demo-cache"]);
});

test("the label filter and the hostname search narrow the fleet on the server", async ({ page }) => {
  await page.goto("/");
  const fleet = fleetTable(page);
  await expect(fleet).toBeVisible();
  await page.getByLabel("Filter by label").selectOption("role:cache");
  await expect(page).toHaveURL(/label=role%3Acache/);
  await expect.poll(() => hostOrder(fleet)).toEqual(["demo-cache"]);
  await expect(page.getByRole("list", { name: "fleet summary" }).locator("[data-summary=hosts] .figure")).toHaveText("1");

  await page.goto("/");
  await page.getByLabel("Search hostname").fill("DROP");
  await expect(page).toHaveURL(/q=DROP/);
  await expect.poll(() => hostOrder(fleetTable(page))).toEqual(["demo-drops"]);
  await page.reload();
  await expect(page.getByLabel("Search hostname")).toHaveValue("DROP");
  await expect.poll(() => hostOrder(fleetTable(page))).toEqual(["demo-drops"]);
});

test("pages of two hosts cover the fleet, from the URL and the pager", async ({ page }) => {
  await page.goto("/?limit=2");
  const fleet = fleetTable(page);
  const pager = page.getByRole("navigation", { name: "fleet pages" });
  await expect.poll(() => hostOrder(fleet)).toEqual(["demo-cache", "demo-default"]);
  await expect(pager).toContainText("1–2 of 4 hosts · page 1 of 2");
  await expect(pager.getByRole("button", { name: "Previous" })).toBeDisabled();
  await pager.getByRole("button", { name: "Next" }).click();
  await expect(page).toHaveURL(/limit=2&offset=2/);
  await expect.poll(() => hostOrder(fleet)).toEqual(["demo-drops", "demo-tuned"]);
  await expect(pager).toContainText("3–4 of 4 hosts · page 2 of 2");
  await expect(pager.getByRole("button", { name: "Next" })).toBeDisabled();
  await pager.getByLabel("Hosts per page").selectOption("25");
  await expect.poll(() => hostOrder(fleet)).toHaveLength(4);
  await expect(page).not.toHaveURL(/offset=/);
});
