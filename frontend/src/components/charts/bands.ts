/** Shaded bands of a time chart, kept to its visible window. */
import type { ChartBand } from "./types";

/** The part of each band inside the domain; bands wholly outside it are dropped. */
export function clipBands(bands: readonly ChartBand[], domain: readonly [number, number]): ChartBand[] {
  return bands
    .map((band) => ({ ...band, from: Math.max(band.from, domain[0]), to: Math.min(band.to, domain[1]) }))
    .filter((band) => band.to >= band.from && band.from <= domain[1] && band.to >= domain[0]);
}
