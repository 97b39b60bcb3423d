/** An admin creates an enrolment token and is shown the command that enrols a host with it. */
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

test("an admin creates an enrolment token and sees the enroll command", async ({ page, demo }) => {
  await page.goto("/");
  await page.getByRole("navigation", { name: "main" }).getByRole("link", { name: "Agents" }).click();
  await expect(page.getByRole("heading", { name: "Agents", level: 1 })).toBeVisible();

  await page.getByLabel("Labels for hosts enrolled with it").fill("env=e2e, role=edge");
  await page.getByRole("button", { name: "Create enrolment token" }).click();

  const created = page.getByLabel("new enrolment token");
  await expect(created.getByRole("alert")).toContainText("Copy these commands now");
  const enroll = created.getByText(/^nginx-fleet-agent enroll /);
  await expect(enroll).toBeVisible();
  await expect(enroll).toContainText(`--server ${demo.url}`);
  await expect(enroll).toContainText(/--token nfe_\S+/);
  await expect(created.getByText(/pip install/)).toBeVisible();
});
