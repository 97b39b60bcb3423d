import { describe, expect, it } from "vitest";
import { metricsUrl, scrapeConfig } from "./scrape-config";

describe("scrape config", () => {
  it("points Prometheus at this server's /metrics with the token as bearer credentials", () => {
    const text = scrapeConfig("https://fleet.example.org:8443", "nfm_secret");
    expect(text).toContain("scheme: https\n");
    expect(text).toContain("metrics_path: /metrics\n");
    expect(text).toContain("    authorization:\n      credentials: nfm_secret\n");
    expect(text).toContain('- targets: ["fleet.example.org:8443"]');
  });

  it("builds the /metrics URL from the origin, with no doubled slash", () => {
    expect(metricsUrl("http://127.0.0.1:8800")).toBe("http://127.0.0.1:8800/metrics");
    expect(metricsUrl("http://127.0.0.1:8800/")).toBe("http://127.0.0.1:8800/metrics");
  });
});
