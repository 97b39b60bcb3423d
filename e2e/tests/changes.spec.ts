/** Recommended changes: a fix of a demo host's finding, approved, applied by its agent, measured. */
import type { APIRequestContext, Page } from "@playwright/test";
import { request } from "@playwright/test";
import { OPERATOR_STORAGE, VIEWER_STORAGE, readDemoState } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

// K-reset on demo-default: its fix adds `reset_timedout_connection on;` at the top of the http
// block (line 11). Nothing above it moves, so the lines other journeys check (e.g.
// worker_connections 768 at line 7) stay where they are; and it changes nothing the demo's
// traffic notices. The journey's change is rolled back in afterAll all the same.
const HOSTNAME = "demo-default";
const RULE = "K-reset";
const COMMENT = "e2e: changes journey";
// The first analysis runs in the demo's worker shortly after a host's first push.
const ANALYSIS_TIMEOUT = 60_000;
// The agent gets an approved change with its next push (every 2 s) and reports each step at once.
const APPLY_TIMEOUT = 90_000;
// The impact window is 20 s in the e2e demo and the worker measures every 30 s.
const IMPACT_TIMEOUT = 150_000;

interface ChangeRow {
  id: number;
  kind: string;
  status: string;
  comment: string;
  reverts_change_id: number | null;
}

const IN_FLIGHT = ["approved", "sent", "applying"];

function csrfOf(cookies: { name: string; value: string }[]): string {
  return cookies.find((cookie) => cookie.name === "nf_csrf")?.value ?? "";
}

async function hostId(api: APIRequestContext, hostname: string): Promise<number> {
  const fleet = ((await (await api.get("/api/v1/fleet")).json()) as { items: { id: number; hostname: string }[] }).items;
  const host = fleet.find((h) => h.hostname === hostname);
  if (!host) throw new Error(`${hostname} is not in the fleet`);
  return host.id;
}

async function hostChanges(api: APIRequestContext, id: number): Promise<ChangeRow[]> {
  const page = (await (await api.get(`/api/v1/changes?host_id=${id}&limit=200`)).json()) as { items: ChangeRow[] };
  return page.items;
}

/** Wait until a change has an outcome; returns its final status. */
async function settled(api: APIRequestContext, changeId: number): Promise<string> {
  let status = "";
  await expect
    .poll(
      async () => {
        status = ((await (await api.get(`/api/v1/changes/${changeId}`)).json()) as ChangeRow).status;
        return IN_FLIGHT.includes(status);
      },
      { timeout: APPLY_TIMEOUT, intervals: [1_000] },
    )
    .toBe(false);
  return status;
}

/** The key of the host's current, unmuted finding of `rule`, if the latest analysis has one. */
async function findingKey(api: APIRequestContext, id: number, rule: string): Promise<string | undefined> {
  const config = (await (await api.get(`/api/v1/hosts/${id}/config`)).json()) as {
    analysis: { findings: { rule: string; key: string }[] } | null;
  };
  return config.analysis?.findings.find((f) => f.rule === rule)?.key;
}

/** Whether the fleet shows the score and counts of the analysis of the config the host runs. */
async function analysedAsItRuns(api: APIRequestContext, id: number): Promise<boolean> {
  const fleet = (
    (await (await api.get("/api/v1/fleet")).json()) as {
      items: { id: number; score: number | null; findings: Record<string, number> | null }[];
    }
  ).items;
  const config = (await (await api.get(`/api/v1/hosts/${id}/config`)).json()) as {
    analysis: { score: number | null; counts: Record<string, number> } | null;
  };
  const row = fleet.find((h) => h.id === id);
  return (
    row !== undefined &&
    config.analysis !== null &&
    row.score === config.analysis.score &&
    ["error", "warning", "info"].every((severity) => row.findings?.[severity] === config.analysis?.counts[severity])
  );
}

async function openFinding(page: Page, rule: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("link", { name: HOSTNAME, exact: true }).click();
  await expect(page.getByRole("heading", { name: HOSTNAME, level: 1 })).toBeVisible();
  await page.getByRole("navigation", { name: "host views" }).getByRole("link", { name: "Config" }).click();
  const findings = page.getByRole("region", { name: "findings" });
  await findings.getByRole("button", { name: new RegExp(`^\\w+\\s*${rule}\\b`) }).click({ timeout: ANALYSIS_TIMEOUT });
  const detail = page.getByRole("article", { name: "selected finding" });
  await expect(detail.getByRole("heading", { name: rule })).toBeVisible();
  await detail.getByRole("button", { name: "Recommended change" }).click();
}

// Put demo-default back as it was: every change this journey applied is rolled back through
// the same path, and the journeys after this one find the config (and its findings) unchanged.
test.afterAll(async () => {
  test.setTimeout(4 * APPLY_TIMEOUT);
  const api = await request.newContext({ baseURL: readDemoState().url, storageState: OPERATOR_STORAGE });
  const headers = { "X-CSRF-Token": csrfOf((await api.storageState()).cookies) };
  const id = await hostId(api, HOSTNAME);
  for (const change of await hostChanges(api, id)) {
    if (change.kind !== "fix" || change.comment !== COMMENT) continue;
    if (change.status === "proposed") {
      await api.post(`/api/v1/changes/${change.id}/reject`, { data: { comment: "e2e cleanup" }, headers });
      continue;
    }
    if ((await settled(api, change.id)) !== "verified") continue;
    const rollback = await api.post(`/api/v1/changes/${change.id}/rollback`, {
      data: { comment: "e2e cleanup" },
      headers,
    });
    expect(rollback.status(), await rollback.text()).toBe(201);
    const reverse = (await rollback.json()) as ChangeRow;
    expect(await settled(api, reverse.id)).toBe("verified");
  }
  // The agent pushes the restored config at once; wait until its analysis finds K-reset again
  // and is the host's latest one, the one the fleet's scores and rollouts go by.
  await expect.poll(() => findingKey(api, id, RULE), { timeout: ANALYSIS_TIMEOUT }).toBeTruthy();
  await expect.poll(() => analysedAsItRuns(api, id), { timeout: ANALYSIS_TIMEOUT }).toBe(true);
  await api.dispose();
});

test.describe("as a viewer", () => {
  test.use({ storageState: VIEWER_STORAGE });

  test("the recommended diff is readable but there is nothing to approve, and the API refuses it", async ({
    page,
  }) => {
    await openFinding(page, RULE);
    const panel = page.getByRole("region", { name: "recommended change" });
    await expect(panel.getByLabel(/^added line \d+$/)).toContainText("reset_timedout_connection on;");
    await expect(panel.getByRole("status").first()).toContainText("Self-check passed");
    await expect(panel).toContainText("Operators and admins can propose and approve this change.");
    await expect(panel.getByRole("button", { name: /Propose|Approve/ })).toHaveCount(0);

    const headers = { "X-CSRF-Token": csrfOf(await page.context().cookies()) };
    const id = await hostId(page.request, HOSTNAME);
    const key = await findingKey(page.request, id, RULE);
    expect(key).toBeTruthy();
    const preview = await page.request.post(`/api/v1/hosts/${id}/changes/preview`, {
      data: { finding_keys: [key] },
      headers,
    });
    expect(preview.status()).toBe(200);
    const created = await page.request.post(`/api/v1/hosts/${id}/changes`, {
      data: { finding_keys: [key], comment: "viewer tries" },
      headers,
    });
    expect(created.status()).toBe(403);
    const changes = await hostChanges(page.request, id);
    const approve = await page.request.post(`/api/v1/changes/${changes[0]?.id ?? 1}/approve`, {
      data: { comment: "viewer tries" },
      headers,
    });
    expect(approve.status()).toBe(403);
  });
});

test.describe("as an operator", () => {
  test.use({ storageState: OPERATOR_STORAGE });

  test("a finding's recommended diff is approved, applied step by step, verified and measured", async ({ page }) => {
    test.setTimeout(ANALYSIS_TIMEOUT + APPLY_TIMEOUT + 2 * IMPACT_TIMEOUT);
    await openFinding(page, RULE);
    const panel = page.getByRole("region", { name: "recommended change" });
    const added = panel.getByLabel(/^added line \d+$/);
    await expect(added).toContainText("reset_timedout_connection on;");
    await expect(added).toHaveAccessibleName("added line 11");
    await expect(panel.getByLabel("score before and after")).toContainText(/Config score \d+ → \d+/);
    await expect(panel.getByRole("status").first()).toContainText("Self-check passed");
    await panel.getByRole("group", { name: "diff layout" }).getByRole("button", { name: "Side by side" }).click();
    await expect(added).toContainText("reset_timedout_connection on;");

    await panel.getByLabel("Comment (optional)").fill(COMMENT);
    await panel.getByRole("button", { name: "Approve and apply" }).click();
    await expect(page).toHaveURL(/\/changes\/\d+$/);
    await expect(page.getByRole("heading", { name: /^Change \d+$/, level: 1 })).toBeVisible();
    await expect(page.getByText(`“${COMMENT}”`).first()).toBeVisible();

    // The agent's steps arrive live (and by polling): each ok, then verified.
    const steps = page.getByRole("list", { name: "apply steps" });
    await expect(steps.getByRole("listitem", { name: "outcome: verified" })).toBeVisible({ timeout: APPLY_TIMEOUT });
    for (const step of ["received", "check", "backup", "write", "test", "reload", "verify"]) {
      await expect(steps.getByRole("listitem", { name: `${step}: ok` })).toBeVisible();
    }
    const changeUrl = page.url();

    const impact = page.getByRole("region", { name: "impact" });
    await expect(impact).toContainText(/Not measured yet|Measuring: the 20 s after the apply|Measured over 20 s/);

    // The agent pushed the config it now runs; its analysis no longer has the finding.
    await page.getByRole("link", { name: HOSTNAME }).first().click();
    await page.getByRole("navigation", { name: "host views" }).getByRole("link", { name: "Config" }).click();
    const findings = page.getByRole("region", { name: "findings" });
    await expect(async () => {
      await page.reload();
      await expect(page.locator(".code-line").filter({ hasText: "reset_timedout_connection on;" })).toHaveCount(1, {
        timeout: 5_000,
      });
      await expect(findings.getByRole("button", { name: new RegExp(`\\b${RULE}\\b`) })).toHaveCount(0, {
        timeout: 5_000,
      });
    }).toPass({ timeout: ANALYSIS_TIMEOUT });
    await expect(page.locator(".code-line").filter({ hasText: "worker_connections 768;" }).locator(".line-number")).toHaveText(
      "7",
    );

    // The change is on the host's Changes tab and marked on its charts.
    await page.getByRole("navigation", { name: "host views" }).getByRole("link", { name: "Changes" }).click();
    const changeId = /\/changes\/(\d+)$/.exec(changeUrl)?.[1] ?? "";
    const row = page.getByRole("table", { name: "host changes" }).getByRole("row").filter({ hasText: `#${changeId}` });
    await expect(row).toContainText("verified");
    await page.getByRole("navigation", { name: "host views" }).getByRole("link", { name: "Metrics" }).click();
    await page.getByRole("group", { name: "time range" }).getByRole("button", { name: "15 min" }).click();
    await expect(
      page.getByRole("list", { name: "changes on the charts" }).getByRole("link", { name: `change ${changeId}` }),
    ).toBeVisible();

    // After the 20 s window the worker compares the figures before and after the apply.
    await page.goto(changeUrl);
    await expect(impact).toContainText(/Measured over 20 s before and after|Not enough data to measure the impact/, {
      timeout: IMPACT_TIMEOUT,
    });
    await expect(impact.getByLabel("score before and after")).toContainText(/Config score \d+ →/);
    const figures = impact.getByRole("table", { name: "impact figures" });
    if ((await figures.count()) > 0) await expect(figures).toContainText("requests/s");
    await expect(page.getByRole("button", { name: "Roll back" })).toBeVisible();
  });
});
