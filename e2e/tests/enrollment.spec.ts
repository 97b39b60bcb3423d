/** An admin creates an enrolment token and is shown the commands that install and enrol a host. */
import { createHash } from "node:crypto";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

test("an admin creates an enrolment token and sees the install and enroll commands", async ({ page, demo }) => {
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

  // The install command fetches the agent from this server, never from the public index, and
  // names the SHA-256 pip checks; the page shows the same SHA-256 and links the wheel.
  const sha256 = (await created.getByLabel("SHA-256").textContent()) ?? "";
  expect(sha256).toMatch(/^[0-9a-f]{64}$/);
  const wheelLink = created.getByRole("link", { name: /^nginx_fleet_agent-.+-py3-none-any\.whl$/ });
  const wheelUrl = (await wheelLink.getAttribute("href")) ?? "";
  expect(wheelUrl).toBe(`${demo.url}/downloads/${await wheelLink.textContent()}`);
  const install = created.getByText(/pip install /);
  await expect(install).toContainText(`pip install '${wheelUrl}#sha256=${sha256}'`);
  await expect(install).not.toContainText("pip install nginx-fleet-agent");

  // What a person would check before running it: the file behind the link has that SHA-256.
  const download = await page.request.get(wheelUrl);
  expect(download.status()).toBe(200);
  expect(createHash("sha256").update(await download.body()).digest("hex")).toBe(sha256);
  expect((await page.request.get(`${demo.url}/downloads/nope.whl`)).status()).toBe(404);
});
