/** Where global setup leaves what the journeys need: the demo's URL, users and login states. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const REPO_ROOT = path.resolve(E2E_DIR, "..");
export const AUTH_DIR = path.join(E2E_DIR, ".auth");
export const STATE_FILE = path.join(AUTH_DIR, "demo.json");
export const ADMIN_STORAGE = path.join(AUTH_DIR, "admin.json");
export const VIEWER_STORAGE = path.join(AUTH_DIR, "viewer.json");
export const OPERATOR_STORAGE = path.join(AUTH_DIR, "operator.json");

export interface Credentials {
  username: string;
  password: string;
}

export interface DemoState {
  /** PID of demo/run_demo.py, leader of its own session (demo/stop_demo.py stops all of it). */
  pid: number;
  dataDir: string;
  url: string;
  admin: Credentials;
  viewer: Credentials;
  operator: Credentials;
  hosts: string[];
}

export function readDemoState(): DemoState {
  return JSON.parse(readFileSync(STATE_FILE, "utf8")) as DemoState;
}
