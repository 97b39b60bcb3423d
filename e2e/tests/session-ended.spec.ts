/** A user whose account an admin deletes is sent to the sign-in page by the live stream. */
import { randomBytes } from "node:crypto";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test("deleting a signed-in user sends their open dashboard to the sign-in page", async ({ browser, demo }) => {
  const username = `leaver-${randomBytes(4).toString("hex")}`;
  const password = randomBytes(12).toString("base64url");

  const adminContext = await browser.newContext({ baseURL: demo.url, storageState: ADMIN_STORAGE });
  const admin = await adminContext.newPage();
  await admin.goto("/settings/users");
  await admin.getByLabel("Username").fill(username);
  await admin.getByLabel("Password").fill(password);
  await admin.getByRole("button", { name: /create/i }).click();
  const users = admin.getByRole("table", { name: "users" });
  await expect(users).toContainText(username);

  // The leaver signs in and watches the fleet, with live updates flowing.
  const leaverContext = await browser.newContext({ baseURL: demo.url });
  const leaver = await leaverContext.newPage();
  await leaver.goto("/login");
  await leaver.getByLabel("Username").fill(username);
  await leaver.getByLabel("Password").fill(password);
  await leaver.getByRole("button", { name: "Sign in" }).click();
  await expect(leaver.getByRole("table", { name: "fleet" })).toBeVisible();
  await expect(leaver.getByRole("banner")).toContainText(username);

  admin.once("dialog", (dialog) => void dialog.accept());
  await admin.getByRole("button", { name: `Delete user ${username}` }).click();
  await expect(users).not.toContainText(username);

  // Without a click or a reload: the stream re-checks the session and ends it.
  await expect(leaver).toHaveURL(/\/login$/, { timeout: 30_000 });
  await expect(leaver.getByRole("button", { name: "Sign in" })).toBeVisible();

  await leaverContext.close();
  await adminContext.close();
});
