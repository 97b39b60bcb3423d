/** Stop the demo started by global setup: SIGTERM to the launcher, which stops all it started. */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { STATE_FILE } from "./demo-state";

const STOP_TIMEOUT_MS = 60_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export default async function globalTeardown(): Promise<void> {
  if (!existsSync(STATE_FILE)) return;
  const { pid, dataDir } = JSON.parse(readFileSync(STATE_FILE, "utf8")) as { pid: number; dataDir: string };
  if (alive(pid)) {
    process.kill(pid, "SIGTERM");
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    if (alive(pid)) {
      // The launcher leads its own process group (spawned detached): stop that group only.
      process.kill(-pid, "SIGKILL");
      throw new Error(`the demo (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s; killed`);
    }
  }
  if (process.env.NF_E2E_KEEP_DATA) {
    console.log(`demo data and logs kept in ${dataDir}`);
  } else {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
