/** Stop the demo started by global setup: the launcher, then anything left in its session. */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT, STATE_FILE } from "./demo-state";

const STOP_TIMEOUT_S = 60;

export default async function globalTeardown(): Promise<void> {
  if (!existsSync(STATE_FILE)) return;
  const { pid, dataDir } = JSON.parse(readFileSync(STATE_FILE, "utf8")) as { pid: number; dataDir: string };
  // Read once: a second teardown (after a failed setup) must not signal a reused pid.
  rmSync(STATE_FILE, { force: true });
  // The launcher leads a session of its own (spawned detached) and its children stay in it:
  // stop_demo.py sends it SIGTERM, waits, then kills whatever is still in that session, so
  // nothing survives a launcher that hung, crashed or was killed.
  let leftovers = "";
  try {
    await promisify(execFile)(
      path.join(REPO_ROOT, ".venv", "bin", "python"),
      [path.join(REPO_ROOT, "demo", "stop_demo.py"), String(pid), "--timeout", String(STOP_TIMEOUT_S)],
      { cwd: REPO_ROOT, timeout: (STOP_TIMEOUT_S + 60) * 1000 },
    );
  } catch (error) {
    leftovers = (error as { stderr?: string }).stderr || String(error);
  }
  if (process.env.NF_E2E_KEEP_DATA || leftovers) {
    console.log(`demo data and logs kept in ${dataDir}`);
  } else {
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (leftovers) throw new Error(`the demo (pid ${pid}) did not stop cleanly:\n${leftovers}`);
}
