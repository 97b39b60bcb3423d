/** A viewer sees the fleet but not the admin pages, in the UI and at the API. */
import { VIEWER_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: VIEWER_STORAGE });

test("a viewer has no admin navigation and is told so on admin pages", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("table", { name: "fleet" })).toBeVisible();
  const nav = page.getByRole("navigation", { name: "main" });
  await expect(nav.getByRole("link", { name: "Fleet" })).toBeVisible();
  await expect(nav.getByRole("link", { name: "Agents" })).toHaveCount(0);

  for (const path of ["/settings/agents", "/settings/users", "/audit"]) {
    await page.goto(path);
    await expect(page.getByRole("alert")).toContainText("You need the admin role to view this page.");
  }
});

test("the API refuses a viewer's admin requests with 403", async ({ page }) => {
  for (const path of ["/api/v1/users", "/api/v1/enrollment-tokens", "/api/v1/audit"]) {
    const response = await page.request.get(path);
    expect(response.status(), path).toBe(403);
  }
  const fleet = await page.request.get("/api/v1/fleet");
  expect(fleet.status()).toBe(200);
});
