/** A fleet rollout over the four real demo hosts stops after its canary fails to apply. */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { APIRequestContext } from "@playwright/test";
import { request } from "@playwright/test";
import { ADMIN_STORAGE, readDemoState } from "../support/demo-state";
import { expect, test } from "../support/fixtures";

// K-reset (reset_timedout_connection off) is fixable on every demo host, and harmless to add.
const RULE = "K-reset";
const ANALYSIS_TIMEOUT = 90_000;
// The agent's verify wait, the beat's 30 s watch that advances rollouts, and push intervals.
const OUTCOME_TIMEOUT = 120_000;

interface RolloutHost {
  host_id: number;
  hostname: string;
  wave: number | null;
  change_id: number | null;
  status: string | null;
}

interface Rollout {
  id: number;
  status: string;
  stop_reason: string | null;
  hosts: RolloutHost[];
}

async function csrfOf(api: APIRequestContext): Promise<string> {
  return (await api.storageState()).cookies.find((cookie) => cookie.name === "nf_csrf")?.value ?? "";
}

/** The PID of a demo instance's nginx master, from its pid file. */
function masterPid(hostname: string): number {
  const pidFile = path.join(readDemoState().dataDir, "nginx", hostname, "logs", "nginx.pid");
  return Number(readFileSync(pidFile, "utf8").trim());
}

async function hostIds(api: APIRequestContext): Promise<Map<string, number>> {
  const fleet = ((await (await api.get("/api/v1/fleet")).json()) as { items: { id: number; hostname: string }[] }).items;
  return new Map(fleet.map((host) => [host.hostname, host.id]));
}

test("a rollout whose canary cannot reload stops there and leaves the other hosts untouched", async () => {
  test.setTimeout(ANALYSIS_TIMEOUT + 2 * OUTCOME_TIMEOUT);
  const state = readDemoState();
  const api = await request.newContext({ baseURL: state.url, storageState: ADMIN_STORAGE });
  const headers = { "X-CSRF-Token": await csrfOf(api) };
  const ids = await hostIds(api);
  const hostnames = [...ids.keys()].sort();
  expect(hostnames).toEqual(["demo-cache", "demo-default", "demo-drops", "demo-tuned"]);

  // Every host must have the finding analysed first: the canary is the first of them by name.
  for (const id of ids.values()) {
    await expect
      .poll(async () => JSON.stringify(await (await api.get(`/api/v1/hosts/${id}/config`)).json()), {
        timeout: ANALYSIS_TIMEOUT,
      })
      .toContain(`"rule":"${RULE}"`);
  }

  // The canary's nginx master is stopped: a reload then starts no new workers, which the agent's
  // verify step must treat as a failure (restore, report), not as success.
  const canary = hostnames[0];
  const pid = masterPid(canary);
  process.kill(pid, "SIGSTOP");
  let rollout: Rollout | undefined;
  try {
    const created = await api.post("/api/v1/rollouts", {
      headers,
      data: { rule: RULE, labels: {}, canary: 1, batch_size: 5, auto_rollback: null, comment: "e2e rollout" },
    });
    expect(created.status(), await created.text()).toBe(201);
    rollout = (await created.json()) as Rollout;
    const waves = new Map(rollout.hosts.map((host) => [host.hostname, host.wave]));
    expect(waves.get(canary)).toBe(0);
    expect(rollout.hosts.filter((host) => host.wave !== 0)).toHaveLength(3);

    const id = rollout.id;
    await expect
      .poll(async () => ((await (await api.get(`/api/v1/rollouts/${id}`)).json()) as Rollout).status, {
        timeout: OUTCOME_TIMEOUT,
        intervals: [2_000],
      })
      .toBe("stopped");
  } finally {
    process.kill(pid, "SIGCONT");
  }

  const stopped = (await (await api.get(`/api/v1/rollouts/${rollout.id}`)).json()) as Rollout;
  expect(stopped.stop_reason).toContain(canary);
  const byHost = new Map(stopped.hosts.map((host) => [host.hostname, host]));
  expect(["rolled_back", "failed"]).toContain(byHost.get(canary)?.status);
  // The canary's change says which step failed, in the agent's words.
  const canaryChange = (await (await api.get(`/api/v1/changes/${byHost.get(canary)?.change_id}`)).json()) as {
    failed_step: string | null;
    events: { step: string | null; status: string }[];
  };
  expect(canaryChange.failed_step).toBe("verify");
  expect(canaryChange.events.some((event) => event.step === "restore")).toBe(true);

  // Nothing was approved or sent to the hosts after the canary: stopping rejected their changes.
  for (const hostname of hostnames.slice(1)) {
    expect(byHost.get(hostname)?.status, hostname).toBe("rejected");
  }

  // The canary serves again with its original config: its next analysis still has the finding.
  const canaryId = ids.get(canary);
  await expect
    .poll(async () => JSON.stringify(await (await api.get(`/api/v1/hosts/${canaryId}/config`)).json()), {
      timeout: ANALYSIS_TIMEOUT,
    })
    .toContain(`"rule":"${RULE}"`);
  await api.dispose();
});
