/** A rollout's hosts grouped by wave, and how far it got. */
import type { Rollout, RolloutHost } from "../api/types";

export interface Wave {
  wave: number;
  /** "canary" for wave 0, then "wave 1", "wave 2", ... */
  name: string;
  hosts: RolloutHost[];
}

/** The hosts of each wave in order; skipped hosts (no wave) are left out. */
export function rolloutWaves(hosts: readonly RolloutHost[]): Wave[] {
  const waves = new Map<number, RolloutHost[]>();
  for (const host of hosts) {
    if (host.wave === null) continue;
    const list = waves.get(host.wave);
    if (list) list.push(host);
    else waves.set(host.wave, [host]);
  }
  return [...waves.entries()]
    .sort(([a], [b]) => a - b)
    .map(([wave, list]) => ({ wave, name: wave === 0 ? "canary" : `wave ${wave}`, hosts: list }));
}

/** How many hosts got a change, how many of those are applied, and how many were skipped. */
export function rolloutCounts(rollout: Pick<Rollout, "hosts">): { planned: number; verified: number; skipped: number } {
  const planned = rollout.hosts.filter((h) => h.change_id !== null);
  return {
    planned: planned.length,
    verified: planned.filter((h) => h.status === "verified").length,
    skipped: rollout.hosts.length - planned.length,
  };
}
