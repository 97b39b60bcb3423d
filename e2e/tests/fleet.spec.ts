/** The fleet page lists the four demo nginx instances, each up and pushing. */
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

const DEMO_HOSTS = ["demo-default", "demo-tuned", "demo-cache", "demo-drops"];

test("the fleet shows every demo host as up", async ({ page, demo }) => {
  expect(demo.hosts.sort()).toEqual([...DEMO_HOSTS].sort());
  await page.goto("/");
  const fleet = page.getByRole("table", { name: "fleet" });
  await expect(fleet).toBeVisible();

  for (const hostname of DEMO_HOSTS) {
    const row = fleet.getByRole("row").filter({ has: page.getByRole("link", { name: hostname, exact: true }) });
    await expect(row).toHaveCount(1);
    await expect(row.getByText("up", { exact: true })).toBeVisible();
    await expect(row.getByRole("button", { name: "env=demo" })).toBeVisible();
  }
});
