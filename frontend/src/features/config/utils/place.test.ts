import { describe, expect, it } from "vitest";
import { describePlace, placeSteps } from "./place";

describe("placeSteps", () => {
  it("splits at slashes outside brackets only", () => {
    expect(placeSteps("http/server[example.com listen 443]/location[~ ^/img/(a|b)/]#2")).toEqual([
      { name: "http", label: "", ordinal: 1 },
      { name: "server", label: "example.com listen 443", ordinal: 1 },
      { name: "location", label: "~ ^/img/(a|b)/", ordinal: 2 },
    ]);
  });

  it("reads regex brackets inside a label as part of it", () => {
    expect(placeSteps("http/server/location[~ ^/[a-z]+/]")).toEqual([
      { name: "http", label: "", ordinal: 1 },
      { name: "server", label: "", ordinal: 1 },
      { name: "location", label: "~ ^/[a-z]+/", ordinal: 1 },
    ]);
  });

  it("gives no steps for the top level", () => {
    expect(placeSteps("")).toEqual([]);
  });
});

describe("describePlace", () => {
  it("names the server and location without the http block", () => {
    expect(describePlace("http/server[example.com]/location[/static/]")).toBe("server example.com › location /static/");
  });

  it("keeps http when nothing inside it is named, and shows conditions and ordinals", () => {
    expect(describePlace("http")).toBe("http");
    expect(describePlace("http/server[a listen 80]#2/if[$request_method = POST]")).toBe(
      "server a listen 80 (#2) › if ($request_method = POST)",
    );
    expect(describePlace("events")).toBe("events");
    expect(describePlace("")).toBe("");
  });
});
