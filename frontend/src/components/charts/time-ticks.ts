/** Evenly spaced, round time ticks across a chart's window. */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const STEPS = [MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR];

/**
 * Ticks at multiples of the smallest round step that keeps at most `maxTicks` in the window.
 * Steps are aligned in local time so that "10:30" and midnight land on ticks.
 */
export function timeTicks(fromMs: number, toMs: number, maxTicks = 7): number[] {
  if (!(toMs > fromMs)) return [];
  const span = toMs - fromMs;
  const step = STEPS.find((s) => span / s <= maxTicks) ?? Math.ceil(span / maxTicks / (24 * HOUR)) * 24 * HOUR;
  const offset = new Date(fromMs).getTimezoneOffset() * MINUTE;
  const first = Math.ceil((fromMs - offset) / step) * step + offset;
  const ticks: number[] = [];
  for (let t = first; t <= toMs; t += step) ticks.push(t);
  return ticks;
}
