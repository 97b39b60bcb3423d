import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestApiServer, startApiServer } from "../test/api-server";
import { ApiError, CSRF_HEADER, createApiClient, describeErrorBody, readCookie, unwrap } from "./client";

let server: TestApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

const csrfHeader = CSRF_HEADER.toLowerCase();

describe("CSRF header", () => {
  it("is sent on unsafe methods with the nf_csrf cookie value", async () => {
    server.reply("POST", "/api/v1/users", { status: 201, body: { id: 1, username: "ann", role: "viewer" } });
    server.reply("DELETE", "/api/v1/users/1", { status: 204 });
    const client = createApiClient({ baseUrl: server.origin, getCookies: () => "other=1; nf_csrf=tok%2Fen; x=y" });
    await unwrap(client.POST("/api/v1/users", { body: { username: "ann", password: "long-enough-pass", role: "viewer" } }));
    await unwrap(client.DELETE("/api/v1/users/{user_id}", { params: { path: { user_id: 1 } } }));
    expect(server.requests.map((r) => [r.method, r.headers[csrfHeader]])).toEqual([
      ["POST", "tok/en"],
      ["DELETE", "tok/en"],
    ]);
    expect(JSON.parse(server.requests[0]?.body ?? "{}")).toEqual({ username: "ann", password: "long-enough-pass", role: "viewer" });
  });

  it("is not sent on safe methods, nor when there is no cookie", async () => {
    server.reply("GET", "/api/v1/users", { status: 200, body: [] });
    server.reply("POST", "/api/v1/auth/logout", { status: 204 });
    const withCookie = createApiClient({ baseUrl: server.origin, getCookies: () => "nf_csrf=abc" });
    await unwrap(withCookie.GET("/api/v1/users"));
    const noCookie = createApiClient({ baseUrl: server.origin, getCookies: () => "" });
    await unwrap(noCookie.POST("/api/v1/auth/logout"));
    expect(server.requests.map((r) => r.headers[csrfHeader])).toEqual([undefined, undefined]);
  });

  it("reads document.cookie by default", async () => {
    document.cookie = "nf_csrf=from-document";
    server.reply("PATCH", "/api/v1/users/3", { status: 200, body: { id: 3 } });
    const client = createApiClient({ baseUrl: server.origin });
    await unwrap(client.PATCH("/api/v1/users/{user_id}", { params: { path: { user_id: 3 } }, body: { role: "admin" } }));
    expect(server.requests[0]?.headers[csrfHeader]).toBe("from-document");
    document.cookie = "nf_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT";
  });
});

describe("error replies", () => {
  const client = () => createApiClient({ baseUrl: server.origin, getCookies: () => "" });

  it("become ApiError carrying the server's detail and status", async () => {
    server.reply("POST", "/api/v1/auth/login", { status: 401, body: { detail: "invalid username or password" } });
    const error = await unwrap(
      client().POST("/api/v1/auth/login", { body: { username: "a", password: "b" } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, message: "invalid username or password" });
  });

  it("turn a validation list into one readable line naming the fields", async () => {
    server.reply("POST", "/api/v1/users", {
      status: 422,
      body: { detail: [{ loc: ["body", "password"], msg: "String should have at least 12 characters" }] },
    });
    await expect(
      unwrap(client().POST("/api/v1/users", { body: { username: "a", password: "short", role: "viewer" } })),
    ).rejects.toThrow("password: String should have at least 12 characters");
  });

  it("fall back to the status when the body says nothing useful", async () => {
    server.reply("GET", "/api/v1/users", { status: 502, body: "", contentType: "text/plain" });
    await expect(unwrap(client().GET("/api/v1/users"))).rejects.toMatchObject({
      status: 502,
      message: "request failed with HTTP 502",
    });
  });
});

describe("helpers", () => {
  it("readCookie finds exact names only", () => {
    expect(readCookie("xnf_csrf=1; nf_csrf=2", "nf_csrf")).toBe("2");
    expect(readCookie("nf_csrf_old=1", "nf_csrf")).toBeUndefined();
  });

  it("describeErrorBody keeps plain-text bodies", () => {
    expect(describeErrorBody(500, "upstream timed out")).toBe("upstream timed out");
  });
});
