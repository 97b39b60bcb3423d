/**
 * Alerting: the demo host that drops connections fires "Dropped connections" with
 * worker_connections as its cause; silences, the rule editor's preview, a webhook channel's
 * test notification to a receiver started here, and the Prometheus metrics token.
 */
import { type IncomingHttpHeaders, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type APIRequestContext, type Page, request } from "@playwright/test";
import { ADMIN_STORAGE, VIEWER_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

const RULE = "Dropped connections";
// The demo host whose worker_connections is too small for its traffic: the first of the demo's
// hosts named for its drops (demo-drops).
const DROPS_HOST_PATTERN = /drops/;
// Its agent pushes every 2 s; the rule needs its window and `for` before it fires, and the
// evaluation runs on its own schedule.
const FIRING_TIMEOUT = 120_000;
const CHANNEL = "e2e-receiver";

function dropsHost(hosts: readonly string[]): string {
  const host = hosts.find((name) => DROPS_HOST_PATTERN.test(name));
  if (!host) throw new Error(`no demo host matches ${DROPS_HOST_PATTERN} among ${hosts.join(", ")}`);
  return host;
}

function csrfOf(cookies: { name: string; value: string }[]): string {
  return cookies.find((cookie) => cookie.name === "nf_csrf")?.value ?? "";
}

async function csrfHeaders(page: Page): Promise<Record<string, string>> {
  return { "X-CSRF-Token": csrfOf(await page.context().cookies()) };
}

/** Remove the channels this journey made, whatever step it stopped at. */
async function deleteChannels(api: APIRequestContext, headers: Record<string, string>): Promise<void> {
  const response = await api.get("/api/v1/alerts/channels");
  if (!response.ok()) return;
  for (const channel of (await response.json()) as { id: number; name: string }[]) {
    if (channel.name === CHANNEL) await api.delete(`/api/v1/alerts/channels/${channel.id}`, { headers });
  }
}

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on the loopback interface that records what it gets and answers 200. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

test.describe("as an admin", () => {
  test.use({ storageState: ADMIN_STORAGE });

  test("the drops host fires Dropped connections, its cause is worker_connections, and the nav counts it", async ({
    page,
    demo,
  }) => {
    test.setTimeout(FIRING_TIMEOUT + 60_000);
    const host = dropsHost(demo.hosts);
    await page.goto("/");
    const nav = page.getByRole("navigation", { name: "main" });
    await nav.getByRole("link", { name: /^Alerts/ }).click();
    await expect(page.getByRole("heading", { name: "Alerts", level: 1 })).toBeVisible();

    // The Firing tab polls; the incident appears (pending first) and fires on its own.
    const card = page.getByRole("article", { name: `${RULE} on ${host}` });
    await expect(card.getByText("firing", { exact: true })).toBeVisible({ timeout: FIRING_TIMEOUT });
    const cause = card.getByRole("region", { name: "cause" });
    await expect(cause).toContainText("worker_connections");
    await expect(card.getByRole("link", { name: host, exact: true })).toHaveAttribute("href", /^\/hosts\/\d+$/);
    await expect(card.getByLabel("value", { exact: true })).toContainText(/\d/);

    // The badge is polled every 15 s: at least this incident once it has caught up.
    const badge = nav.getByRole("img", { name: /^\d+ firing$/ });
    await expect(badge).toBeVisible({ timeout: 30_000 });
    expect(Number(await badge.textContent())).toBeGreaterThanOrEqual(1);

    await card.getByRole("link", { name: RULE, exact: true }).click();
    await expect(page).toHaveURL(/\/alerts\/incidents\/\d+$/);
    await expect(page.getByRole("heading", { name: `${RULE} on ${host}`, level: 1 })).toBeVisible();
    await expect(page.getByRole("region", { name: "cause" })).toContainText("worker_connections");
    await expect(page.getByRole("heading", { name: "Notifications" })).toBeVisible();
    const finding = page.getByRole("link", { name: "See the finding and its fix" });
    if ((await finding.count()) > 0) await expect(finding).toHaveAttribute("href", /^\/hosts\/\d+\/config/);
  });

  test("a silence of the drops host is listed with its reason and author, then expired", async ({ page, demo }) => {
    const host = dropsHost(demo.hosts);
    const reason = `e2e: maintenance of ${host} ${Date.now()}`;
    await page.goto("/alerts");
    await page.getByRole("navigation", { name: "alert views" }).getByRole("link", { name: "Silences" }).click();

    const form = page.getByRole("form", { name: "new silence" });
    await form.getByLabel("Matcher 1 label").fill("host");
    await form.getByLabel("Matcher 1 operator").selectOption("=");
    await form.getByLabel("Matcher 1 value").fill(host);
    await form.getByLabel("Duration", { exact: true }).fill("1h");
    await form.getByLabel("Reason", { exact: true }).fill(reason);
    await form.getByRole("button", { name: "Create silence" }).click();

    const row = page.getByRole("table", { name: "silences" }).getByRole("row").filter({ hasText: reason });
    await expect(row).toContainText(`host=${host}`);
    await expect(row).toContainText(demo.admin.username);
    await expect(row).toContainText("active");
    await row.getByRole("button", { name: /^Expire silence \d+ now$/ }).click();
    await expect(row).toHaveCount(0);

    await page.getByLabel("Show expired").check();
    await expect(row).toContainText("expired");
    await expect(row.getByRole("button", { name: /^Expire/ })).toHaveCount(0);
  });

  test("editing the rule's threshold updates the preview of the hosts it matches", async ({ page, demo }) => {
    const host = dropsHost(demo.hosts);
    await page.goto("/alerts/rules");
    await page.getByRole("table", { name: "alert rules" }).getByRole("link", { name: `Edit ${RULE}` }).click();
    await expect(page.getByRole("heading", { name: RULE, level: 1 })).toBeVisible();

    const preview = page.getByRole("region", { name: "preview" });
    const count = preview.getByText(/^\d+ of \d+ hosts? would match$/);
    await expect(count).toBeVisible();
    const threshold = page.getByLabel("Threshold", { exact: true });
    const original = await threshold.inputValue();

    await threshold.fill("1000000000");
    await expect(preview).toContainText("> 1000000000 over");
    await expect(count).toHaveText(/^0 of \d+ hosts? would match$/);

    await threshold.fill(original);
    await expect(preview).toContainText(`> ${original} over`);
    // With the shipped threshold the drops host matches again (it has been dropping all along).
    const hostRow = preview.getByRole("table", { name: "hosts in scope" }).getByRole("row").filter({ hasText: host });
    await expect(hostRow.getByRole("cell").last()).toHaveText("matches", { timeout: 30_000 });
    await expect(count).toHaveText(/^[1-9]\d* of \d+ hosts? would match$/);

    // Saved as it was: the editor's body is one the API takes.
    await page.getByRole("button", { name: "Save rule" }).click();
    await expect(page.getByText("Saved.")).toBeVisible();
  });

  test("the rules download as the YAML file the CLI and the API import", async ({ page }) => {
    await page.goto("/alerts/rules");
    const downloading = page.waitForEvent("download");
    await page.getByRole("link", { name: "Download rules file" }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe("alert-rules.yaml");
    const chunks: Buffer[] = [];
    for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    expect(text).toMatch(/^rules:\n/);
    expect(text).toContain("key: dropped-connections");
    expect(text).toContain("window: 2m");
  });

  test("a webhook channel's test notification reaches a receiver in Alertmanager's format", async ({ page }) => {
    const receiver = await startReceiver();
    const headers = await csrfHeaders(page);
    try {
      await deleteChannels(page.request, headers);
      await page.goto("/alerts");
      await page.getByRole("navigation", { name: "alert views" }).getByRole("link", { name: "Channels" }).click();
      await page.getByRole("button", { name: "New channel" }).click();
      const form = page.getByRole("form", { name: "new channel" });
      await form.getByLabel("Name", { exact: true }).fill(CHANNEL);
      await form.getByLabel("Kind").selectOption("webhook");
      await form.getByLabel("URL", { exact: true }).fill(receiver.url);
      const token = form.getByLabel("Bearer token", { exact: true });
      await expect(token).toHaveAttribute("type", "password");
      await token.fill("e2e-bearer");
      await form.getByRole("button", { name: "Create channel" }).click();

      const card = page.getByRole("article", { name: `channel ${CHANNEL}` });
      await expect(card).toContainText(receiver.url);
      await card.getByRole("button", { name: "Send test notification" }).click();
      await expect(card.getByRole("status", { name: "test notification outcome" })).toContainText("sent");

      await expect.poll(() => receiver.received.length).toBeGreaterThan(0);
      const [request] = receiver.received;
      expect(request?.method).toBe("POST");
      expect(request?.headers.authorization).toBe("Bearer e2e-bearer");
      const body = JSON.parse(request?.body ?? "{}") as { version?: unknown; status?: unknown; alerts?: unknown };
      expect(body.version).toBe("4");
      expect(["firing", "resolved"]).toContain(body.status);
      expect(Array.isArray(body.alerts)).toBe(true);

      await card.getByRole("button", { name: "Show recent deliveries" }).click();
      await expect(card.getByRole("table", { name: "recent deliveries" })).toContainText("test");

      // The token is stored, never shown: the form says it is set and keeps it when left empty.
      await card.getByRole("button", { name: "Edit" }).click();
      await expect(card.getByLabel("Bearer token", { exact: true })).toHaveValue("");
      await expect(card.getByLabel("Bearer token", { exact: true })).toHaveAttribute(
        "placeholder",
        "set — leave empty to keep",
      );
      await card.getByRole("button", { name: "Cancel" }).click();

      page.once("dialog", (dialog) => void dialog.accept());
      await card.getByRole("button", { name: "Delete" }).click();
      await expect(card).toHaveCount(0);
    } finally {
      await deleteChannels(page.request, headers);
      await receiver.close();
    }
  });

  test("the Prometheus metrics token is shown once with its scrape config, scrapes /metrics, and is deleted", async ({
    page,
    demo,
  }) => {
    // Rotating and deleting ask first; the journey says yes.
    page.on("dialog", (dialog) => void dialog.accept());
    await page.goto("/");
    await page.getByRole("navigation", { name: "main" }).getByRole("link", { name: "Prometheus" }).click();
    await expect(page.getByRole("heading", { name: "Prometheus", level: 1 })).toBeVisible();
    const state = page.getByRole("status", { name: "metrics token state" });
    await expect(state).toBeVisible();

    // A token left by an earlier run is rotated, else created.
    await page.getByRole("button", { name: /^(Create|Rotate) token$/ }).click();
    const created = page.getByLabel("new metrics token");
    await expect(created.getByRole("alert")).toContainText("shown only once");
    const token = ((await created.getByLabel("Token", { exact: true }).textContent()) ?? "").trim();
    expect(token.length).toBeGreaterThan(16);
    const config = created.getByLabel("prometheus.yml", { exact: true });
    await expect(config).toContainText(`credentials: ${token}`);
    await expect(config).toContainText("metrics_path: /metrics");

    // What Prometheus does with it: no session, only the token.
    const scraper = await request.newContext({ baseURL: demo.url });
    const scrape = await scraper.get("/metrics", { headers: { Authorization: `Bearer ${token}` } });
    expect(scrape.status()).toBe(200);
    expect(await scrape.text()).toMatch(/^# (HELP|TYPE) /m);
    const refused = await scraper.get("/metrics", { headers: { Authorization: "Bearer not-the-token" } });
    expect([401, 403]).toContain(refused.status());
    await scraper.dispose();

    await created.getByRole("button", { name: "Done" }).click();
    await expect(page.getByText(token)).toHaveCount(0);
    await expect(state).toContainText("A token is set");

    await page.getByRole("button", { name: "Delete token" }).click();
    await expect(state).toContainText("No token is set");
  });
});

test.describe("as a viewer", () => {
  test.use({ storageState: VIEWER_STORAGE });

  test("no Channels tab, no edit buttons, a read-only rule, and the API refuses the writes", async ({ page }) => {
    await page.goto("/alerts");
    const tabs = page.getByRole("navigation", { name: "alert views" });
    await expect(tabs.getByRole("link", { name: "Firing" })).toBeVisible();
    await expect(tabs.getByRole("link", { name: "Channels" })).toHaveCount(0);
    await expect(page.getByRole("navigation", { name: "main" }).getByRole("link", { name: "Prometheus" })).toHaveCount(0);

    await tabs.getByRole("link", { name: "Rules" }).click();
    const table = page.getByRole("table", { name: "alert rules" });
    await expect(table.getByRole("link", { name: RULE, exact: true })).toBeVisible();
    await expect(table.getByRole("link", { name: /^Edit / })).toHaveCount(0);
    await expect(page.getByRole("link", { name: "New rule" })).toHaveCount(0);
    await table.getByRole("link", { name: RULE, exact: true }).click();
    await expect(page.getByRole("heading", { name: RULE, level: 1 })).toBeVisible();
    await expect(page.getByLabel("Threshold", { exact: true })).toBeDisabled();
    await expect(page.getByRole("button", { name: /^(Save|Delete) rule$/ })).toHaveCount(0);

    await page.getByRole("navigation", { name: "breadcrumb" }).getByRole("link", { name: "Alerts" }).click();
    await tabs.getByRole("link", { name: "Silences" }).click();
    await expect(page.getByRole("heading", { name: "Active silences" })).toBeVisible();
    await expect(page.getByRole("form", { name: "new silence" })).toHaveCount(0);

    await page.goto("/alerts/channels");
    await expect(page.getByRole("alert")).toContainText("You need the admin role to view this page.");

    const headers = await csrfHeaders(page);
    expect((await page.request.get("/api/v1/alerts/channels")).status()).toBe(403);
    const rules = (await (await page.request.get("/api/v1/alerts/rules")).json()) as Record<string, unknown>[];
    const rule = rules[0];
    expect(rule).toBeDefined();
    // The rule as it is, in the shape PUT takes: only the role stands in the way.
    const { id, last_error: _lastError, firing: _firing, ...body } = rule ?? {};
    const put = await page.request.put(`/api/v1/alerts/rules/${String(id)}`, { data: body, headers });
    expect(put.status()).toBe(403);
    const silence = await page.request.post("/api/v1/alerts/silences", {
      data: {
        rule_id: id ?? null,
        matchers: [],
        ends_at: new Date(Date.now() + 3_600_000).toISOString(),
        reason: "viewer tries",
      },
      headers,
    });
    expect(silence.status()).toBe(403);
  });
});
