/** The journeys' `test`: the demo's URL as baseURL and its users at hand. */
import { test as base } from "@playwright/test";
import { type DemoState, readDemoState } from "./demo-state";

export const test = base.extend<{ demo: DemoState }>({
  demo: async ({}, use) => {
    await use(readDemoState());
  },
  baseURL: async ({}, use) => {
    await use(readDemoState().url);
  },
});

export { expect } from "@playwright/test";
