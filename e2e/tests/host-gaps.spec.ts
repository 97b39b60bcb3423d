/** Samples an agent lost to a full spool are explained on the host page, not left as a silent hole. */
import type { APIRequestContext } from "@playwright/test";
import { ADMIN_STORAGE } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

test.use({ storageState: ADMIN_STORAGE });

const HOSTNAME = "e2e-spool-overflow";

/** Local "YYYY-MM-DD HH:MM:SS", as the UI shows times. */
function shown(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

/** An RFC 3339 time without milliseconds, as the agent sends it. */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function sample(seq: number, ts: string) {
  return {
    seq,
    ts,
    nginx: { up: true, error: null, master_pid: 4242, workers: 1 },
    stub_status: { available: false, url: null, error: "connection refused" },
  };
}

/** Enrol a new agent with a fresh enrolment token; its host id and host token. */
async function enrolAgent(request: APIRequestContext, csrf: string): Promise<{ hostId: number; token: string }> {
  const created = await request.post("/api/v1/enrollment-tokens", {
    data: { labels: { env: "e2e" } },
    headers: { "X-CSRF-Token": csrf },
  });
  expect(created.status(), await created.text()).toBe(201);
  const enrolment = (await created.json()) as { token: string };
  const enrolled = await request.post("/api/v1/agent/enroll", {
    data: {
      enrollment_token: enrolment.token,
      agent_id: `e2e-gap-${Date.now()}`,
      hostname: HOSTNAME,
      labels: {},
    },
  });
  expect(enrolled.status(), await enrolled.text()).toBe(201);
  const reply = (await enrolled.json()) as { host_id: number; host_token: string };
  return { hostId: reply.host_id, token: reply.host_token };
}

test("a spool overflow the agent reports is shown beside the charts", async ({ page }) => {
  const csrf = (await page.context().cookies()).find((cookie) => cookie.name === "nf_csrf")?.value ?? "";
  const { hostId, token } = await enrolAgent(page.request, csrf);
  const agentId = (await (await page.request.get(`/api/v1/hosts/${hostId}`)).json()).agent_id as string;
  try {
    const now = Date.now();
    const lostFrom = new Date(now - 10 * 60_000);
    const lostTo = new Date(now - 6 * 60_000);
    // What the agent sends after its spool overflowed: the samples it kept (one of them from a
    // clock that stepped back to 1970) and the seq range it had to drop.
    const pushed = await page.request.post("/api/v1/agent/push", {
      headers: { Authorization: `Bearer ${token}` },
      data: {
        agent_id: agentId,
        agent_version: "0.1.0",
        hostname: HOSTNAME,
        samples: [sample(31, "1970-01-01T00:00:00Z"), sample(32, rfc3339(new Date(now - 5_000)))],
        gaps: [
          { from_seq: 1, to_seq: 30, from_ts: rfc3339(lostFrom), to_ts: rfc3339(lostTo), reason: "spool_overflow" },
        ],
      },
    });
    expect(pushed.status(), await pushed.text()).toBe(200);
    const reply = (await pushed.json()) as { accepted: number; gaps: number; rejected: { seq: number; field: string }[] };
    expect(reply.accepted).toBe(1);
    expect(reply.gaps).toBe(1);
    expect(reply.rejected.map((r) => [r.seq, r.field])).toEqual([[31, "samples[0].ts"]]);

    await page.goto("/");
    await page.getByRole("link", { name: HOSTNAME, exact: true }).click();
    await expect(page.getByRole("heading", { name: HOSTNAME, level: 1 })).toBeVisible();
    const notice = page.getByRole("status", { name: "samples lost by the agent" });
    await expect(notice).toHaveText(
      `agent spool overflow: 30 samples lost between ${shown(lostFrom)} and ${shown(lostTo)}`,
    );

    // The loss ended 6 minutes ago: the last 15 minutes still cover it, and so do 7 days.
    const picker = page.getByRole("group", { name: "time range" });
    await picker.getByRole("button", { name: "15 min" }).click();
    await expect(notice).toBeVisible();
    await picker.getByRole("button", { name: "7 d" }).click();
    await expect(page).toHaveURL(/[?&]range=7d\b/);
    await expect(notice).toContainText("30 samples lost");
  } finally {
    await page.request.delete(`/api/v1/hosts/${hostId}`, { headers: { "X-CSRF-Token": csrf } });
  }
});
