/** Start the demo (backend, three real nginx, agents, traffic), then log in an admin, a viewer and an operator. */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { type APIRequestContext, request } from "@playwright/test";
import {
  ADMIN_STORAGE,
  AUTH_DIR,
  type Credentials,
  type DemoState,
  OPERATOR_STORAGE,
  REPO_ROOT,
  STATE_FILE,
  VIEWER_STORAGE,
} from "./demo-state";
import globalTeardown from "./global-teardown";

const READY_TIMEOUT_MS = 240_000;
// Short pushes so the charts have several points within a minute of start.
const PUSH_INTERVAL_S = 2;
// Short impact windows (before and after an applied change) so that the changes journey sees
// the impact measured within a minute or two, not after the 5 minutes of the default.
const IMPACT_WINDOW_S = 20;

interface ReadyFile {
  url: string;
  username: string;
  password: string;
  hosts: string[];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function tail(file: string): string {
  return existsSync(file) ? readFileSync(file, "utf8").slice(-4000) : "(no output)";
}

async function waitForReadyFile(file: string, demoLog: string, exited: () => string | null): Promise<ReadyFile> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const code = exited();
    if (code !== null) throw new Error(`the demo exited (${code}) before it was ready:\n${tail(demoLog)}`);
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as ReadyFile;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the demo was not ready after ${READY_TIMEOUT_MS / 1000} s:\n${tail(demoLog)}`);
}

/** Log in through the API and keep the session and CSRF cookies as a storage state. */
async function login(url: string, user: Credentials, storagePath: string): Promise<APIRequestContext> {
  const context = await request.newContext({ baseURL: url });
  const response = await context.post("/api/v1/auth/login", { data: user });
  if (!response.ok()) throw new Error(`login as ${user.username} failed: ${response.status()} ${await response.text()}`);
  await context.storageState({ path: storagePath });
  return context;
}

async function createUser(
  admin: APIRequestContext,
  url: string,
  user: Credentials,
  role: "viewer" | "operator",
): Promise<void> {
  const cookies = (await admin.storageState()).cookies;
  const csrf = cookies.find((cookie) => cookie.name === "nf_csrf")?.value ?? "";
  const response = await admin.post(`${url}/api/v1/users`, {
    data: { ...user, role },
    headers: { "X-CSRF-Token": csrf },
  });
  if (response.status() !== 201 && response.status() !== 200) {
    throw new Error(`creating the ${role} failed: ${response.status()} ${await response.text()}`);
  }
}

export default async function globalSetup(): Promise<void> {
  mkdirSync(AUTH_DIR, { recursive: true });
  const dataDir = mkdtempSync(path.join(tmpdir(), "nf-e2e-"));
  const readyFile = path.join(dataDir, "ready.json");
  const demoLog = path.join(dataDir, "demo.log");
  const port = await freePort();
  const output = openSync(demoLog, "a");
  const demo = spawn(
    path.join(REPO_ROOT, ".venv", "bin", "python"),
    [
      path.join(REPO_ROOT, "demo", "run_demo.py"),
      "--port",
      String(port),
      "--data-dir",
      dataDir,
      "--push-interval",
      String(PUSH_INTERVAL_S),
      "--traffic-seconds",
      "1800",
      "--ready-file",
      readyFile,
    ],
    // detached: the launcher leads a new session, which its children share, so that teardown
    // can stop all of them even if the launcher itself dies first.
    {
      cwd: REPO_ROOT,
      // Live streams re-check their session often, so a journey sees a deleted user go at once.
      env: {
        ...process.env,
        NGINX_FLEET_EVENTS_RECHECK_S: "2",
        NGINX_FLEET_IMPACT_WINDOW_S: String(IMPACT_WINDOW_S),
      },
      stdio: ["ignore", output, output],
      detached: true,
    },
  );
  demo.unref();
  const pid = demo.pid;
  if (pid === undefined) throw new Error("could not start demo/run_demo.py");
  // Written at once, so that teardown stops the demo even when the rest of the setup fails.
  const partial = { pid, dataDir, url: "", hosts: [] };
  writeFileSync(STATE_FILE, JSON.stringify(partial, null, 2));

  let ready: ReadyFile;
  let admin: Credentials;
  let viewer: Credentials;
  let operator: Credentials;
  try {
    // A launcher killed by a signal has no exit code, only the signal's name.
    const exited = () => (demo.exitCode !== null ? `status ${demo.exitCode}` : demo.signalCode);
    ready = await waitForReadyFile(readyFile, demoLog, exited);
    admin = { username: ready.username, password: ready.password };
    viewer = { username: "viewer", password: randomBytes(12).toString("base64url") };
    operator = { username: "operator", password: randomBytes(12).toString("base64url") };
    const adminContext = await login(ready.url, admin, ADMIN_STORAGE);
    await createUser(adminContext, ready.url, viewer, "viewer");
    await createUser(adminContext, ready.url, operator, "operator");
    await adminContext.dispose();
    await (await login(ready.url, viewer, VIEWER_STORAGE)).dispose();
    await (await login(ready.url, operator, OPERATOR_STORAGE)).dispose();
  } catch (error) {
    // Stop the demo here: whether teardown runs after a failed setup is not ours to assume.
    process.env.NF_E2E_KEEP_DATA = "1";
    await globalTeardown().catch((stopError: unknown) => console.error(stopError));
    throw error;
  }

  const state: DemoState = { pid, dataDir, url: ready.url, admin, viewer, operator, hosts: ready.hosts };
  writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
}
