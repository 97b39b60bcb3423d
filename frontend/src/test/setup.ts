import "@testing-library/jest-dom/vitest";
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

// Fixed zone so local-time formatting is the same on every machine.
process.env.TZ = "UTC";

afterEach(() => {
  cleanup();
});
