/** An admin resets a host's agent enrolment: the old token stops working, the agent may enrol again once. */
import { randomUUID } from "node:crypto";
import type { APIRequestContext } from "@playwright/test";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

async function csrfHeader(request: APIRequestContext): Promise<Record<string, string>> {
  const cookies = (await request.storageState()).cookies;
  return { "X-CSRF-Token": cookies.find((cookie) => cookie.name === "nf_csrf")?.value ?? "" };
}

/** A new enrolment token, as an admin makes one on the Agents page. */
async function newEnrolmentToken(request: APIRequestContext): Promise<string> {
  const created = await request.post("/api/v1/enrollment-tokens", {
    data: { max_uses: 2 },
    headers: await csrfHeader(request),
  });
  expect(created.status()).toBe(201);
  return ((await created.json()) as { token: string }).token;
}

/** A host of its own, enrolled like an agent would, so the demo's agents keep pushing. */
async function enrolHost(request: APIRequestContext, agentId: string, hostname: string) {
  const enrolmentToken = await newEnrolmentToken(request);
  const enrolled = await request.post("/api/v1/agent/enroll", {
    data: { enrollment_token: enrolmentToken, agent_id: agentId, hostname },
  });
  expect(enrolled.status()).toBe(201);
  const reply = (await enrolled.json()) as { host_id: number; host_token: string };
  return { enrolmentToken, hostId: reply.host_id, hostToken: reply.host_token };
}

test("an admin resets a host's agent enrolment from the host page", async ({ page }) => {
  const agentId = randomUUID();
  const hostname = `e2e-reset-${agentId.slice(0, 8)}`;
  const { enrolmentToken, hostId, hostToken } = await enrolHost(page.request, agentId, hostname);
  const ping = () => page.request.post("/api/v1/agent/ping", { headers: { Authorization: `Bearer ${hostToken}` } });
  try {
    expect((await ping()).status()).toBe(200);
    // Without the host's token or a reset, its agent_id cannot be enrolled again.
    const takeover = await page.request.post("/api/v1/agent/enroll", {
      data: { enrollment_token: enrolmentToken, agent_id: agentId, hostname },
    });
    expect(takeover.status()).toBe(409);

    await page.goto(`/hosts/${hostId}`);
    await expect(page.getByRole("heading", { name: hostname, level: 1 })).toBeVisible();
    const section = page.getByRole("region", { name: "Agent enrolment" });
    let confirmation = "";
    page.once("dialog", (dialog) => {
      confirmation = dialog.message();
      void dialog.accept();
    });
    await section.getByRole("button", { name: "Reset agent enrolment" }).click();
    await expect(section.getByRole("status")).toContainText("the agent's old token no longer works");
    expect(confirmation).toContain(`Reset the agent enrolment of ${hostname}?`);

    expect((await ping()).status()).toBe(401);
    // A token from before the reset cannot claim the host; one made after it can, once.
    const stale = await page.request.post("/api/v1/agent/enroll", {
      data: { enrollment_token: enrolmentToken, agent_id: agentId, hostname },
    });
    expect(stale.status()).toBe(409);
    const again = await page.request.post("/api/v1/agent/enroll", {
      data: { enrollment_token: await newEnrolmentToken(page.request), agent_id: agentId, hostname },
    });
    expect(again.status()).toBe(201);
    expect(((await again.json()) as { host_id: number }).host_id).toBe(hostId);

    await page.goto("/audit");
    const entry = page.getByRole("row").filter({ hasText: "host.reset_enrolment" }).filter({ hasText: `host:${hostId}` });
    await expect(entry).toHaveCount(1);
  } finally {
    await page.request.delete(`/api/v1/hosts/${hostId}`, { headers: await csrfHeader(page.request) });
  }
});

test("cancelling the confirmation leaves the enrolment alone", async ({ page }) => {
  const agentId = randomUUID();
  const hostname = `e2e-keep-${agentId.slice(0, 8)}`;
  const { hostId, hostToken } = await enrolHost(page.request, agentId, hostname);
  try {
    await page.goto(`/hosts/${hostId}`);
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.getByRole("button", { name: "Reset agent enrolment" }).click();
    await expect(page.getByRole("region", { name: "Agent enrolment" }).getByRole("status")).toHaveCount(0);
    const ping = await page.request.post("/api/v1/agent/ping", { headers: { Authorization: `Bearer ${hostToken}` } });
    expect(ping.status()).toBe(200);
  } finally {
    await page.request.delete(`/api/v1/hosts/${hostId}`, { headers: await csrfHeader(page.request) });
  }
});
