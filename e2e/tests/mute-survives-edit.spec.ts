/** A muted finding stays muted when the agent pushes the config again with lines inserted above it. */
import { createHash } from "node:crypto";
import type { APIRequestContext, Page } from "@playwright/test";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

const HOSTNAME = "e2e-mute-edit";
const ANALYSIS_TIMEOUT = 60_000;
const REASON = "public mirror: the listing is wanted";

const SITE = [
  "worker_processes auto;",
  "events {",
  "    worker_connections 1024;",
  "}",
  "http {",
  "    server_tokens off;",
  "    server {",
  "        listen 80;",
  "        server_name mirror.example.com;",
  "        location /pub/ {",
  "            root /srv/mirror;",
  "            autoindex on;",
  "        }",
  "    }",
  "}",
];
const EDITED = ["# tuned by ops", "user www-data;", "pid /run/nginx.pid;", "", ...SITE];

/** The `nginx -T` dump the agent sends for one file. */
function dump(lines: readonly string[]): string {
  return `# configuration file /etc/nginx/nginx.conf:\n${lines.join("\n")}\n`;
}

function sample(seq: number) {
  return {
    seq,
    ts: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    nginx: { up: true, error: null, master_pid: 4242, workers: 2 },
    stub_status: { available: false, url: null, error: "connection refused" },
  };
}

interface Agent {
  hostId: number;
  agentId: string;
  token: string;
}

async function enrolAgent(request: APIRequestContext, csrf: string): Promise<Agent> {
  const created = await request.post("/api/v1/enrollment-tokens", {
    data: { labels: { env: "e2e" } },
    headers: { "X-CSRF-Token": csrf },
  });
  expect(created.status(), await created.text()).toBe(201);
  const agentId = `e2e-mute-${Date.now()}`;
  const enrolled = await request.post("/api/v1/agent/enroll", {
    data: { enrollment_token: ((await created.json()) as { token: string }).token, agent_id: agentId, hostname: HOSTNAME },
  });
  expect(enrolled.status(), await enrolled.text()).toBe(201);
  const reply = (await enrolled.json()) as { host_id: number; host_token: string };
  return { hostId: reply.host_id, agentId, token: reply.host_token };
}

/** What the agent sends when it reads a changed config: the dump, its hash and a sample. */
async function pushConfig(request: APIRequestContext, agent: Agent, lines: readonly string[], seq: number) {
  const text = dump(lines);
  const hash = createHash("sha256").update(text).digest("hex");
  const pushed = await request.post("/api/v1/agent/push", {
    headers: { Authorization: `Bearer ${agent.token}` },
    data: {
      agent_id: agent.agentId,
      agent_version: "0.1.0",
      hostname: HOSTNAME,
      facts: { nginx_version: "1.22.1", cpu_count: 2 },
      config: { hash, dump: text },
      config_hash: hash,
      samples: [sample(seq)],
    },
  });
  expect(pushed.status(), await pushed.text()).toBe(200);
}

function autoindexLine(page: Page) {
  return page.locator(".code-line").filter({ hasText: "autoindex on;" });
}

test("an acknowledged finding stays muted after lines are inserted above it", async ({ page }) => {
  const csrf = (await page.context().cookies()).find((cookie) => cookie.name === "nf_csrf")?.value ?? "";
  const agent = await enrolAgent(page.request, csrf);
  try {
    await pushConfig(page.request, agent, SITE, 1);
    await page.goto(`/hosts/${agent.hostId}/config`);
    const line = autoindexLine(page);
    await expect(line.locator(".line-number")).toHaveText("12");
    const marker = line.getByRole("button", { name: /at line 12: .*X-autoindex/ });
    await expect(marker).toBeVisible({ timeout: ANALYSIS_TIMEOUT });
    await marker.click();
    const detail = page.getByRole("article", { name: "selected finding" });
    await expect(detail.getByLabel("place")).toHaveText("in server mirror.example.com › location /pub/");
    await detail.getByRole("button", { name: "Acknowledge" }).click();
    const form = page.getByRole("form", { name: "acknowledge finding" });
    await form.getByLabel("Reason").fill(REASON);
    await form.getByRole("button", { name: "Mute finding" }).click();
    await expect(detail).toContainText("Muted (this host, this finding)");
    await expect(marker).toHaveCount(0);

    // The agent reads the edited config: the directive is now four lines further down.
    await pushConfig(page.request, agent, EDITED, 2);
    await expect(async () => {
      await page.reload();
      await expect(autoindexLine(page).locator(".line-number")).toHaveText("16", { timeout: 2_000 });
      const findings = page.getByRole("region", { name: "findings" });
      await findings.getByLabel("show muted").check();
      await expect(autoindexLine(page).getByRole("button", { name: /\(muted\) at line 16/ })).toBeVisible({
        timeout: 2_000,
      });
    }).toPass({ timeout: ANALYSIS_TIMEOUT });
    // Muted by the same acknowledgement, not counted, not in the list unless asked for.
    await autoindexLine(page).getByRole("button", { name: /\(muted\) at line 16/ }).click();
    const moved = page.getByRole("article", { name: "selected finding" });
    await expect(moved).toContainText(`“${REASON}”`);
    await expect(moved.getByRole("button", { name: "Unmute" })).toBeVisible();
    await page.getByRole("region", { name: "findings" }).getByLabel("show muted").uncheck();
    await expect(page.getByRole("region", { name: "findings" }).getByRole("button", { name: /X-autoindex/ })).toHaveCount(
      0,
    );
  } finally {
    await page.request.delete(`/api/v1/hosts/${agent.hostId}`, { headers: { "X-CSRF-Token": csrf } });
  }
});
