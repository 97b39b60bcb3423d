/** Signing in: the right password opens the fleet, a wrong one is refused and says why. */
import { expect, test } from "../support/fixtures";

test("a visitor is sent to the login page and signs in", async ({ page, demo }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole("heading", { name: "nginx-fleet" })).toBeVisible();

  await page.getByLabel("Username").fill(demo.admin.username);
  await page.getByLabel("Password").fill(demo.admin.password);
  await page.getByRole("button", { name: "Sign in" }).click();

  await expect(page).not.toHaveURL(/\/login$/);
  await expect(page.getByRole("table", { name: "fleet" })).toBeVisible();
  await expect(page.getByRole("banner")).toContainText(demo.admin.username);
});

test("a wrong password is refused with a message", async ({ page, demo }) => {
  await page.goto("/login");
  await page.getByLabel("Username").fill(demo.admin.username);
  await page.getByLabel("Password").fill(`${demo.admin.password}-wrong`);
  await page.getByRole("button", { name: "Sign in" }).click();

  await expect(page.getByRole("alert")).toContainText(/invalid username or password/i);
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole("table", { name: "fleet" })).toHaveCount(0);
});
