import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type TestApiServer, startApiServer } from "../test/api-server";
import { fleetHost, fleetPage, hostDetail, series, seriesPoint, user } from "../test/factories";
import { renderApp } from "../test/render-app";

let server: TestApiServer;

beforeAll(async () => {
  server = await startApiServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  server.reply("GET", "/api/v1/fleet/labels", { status: 200, body: { env: ["prod", "dev"], role: ["edge"] } });
  server.reply("GET", "/api/v1/fleet", { status: 200, body: fleetPage([fleetHost()]) });
});

describe("login", () => {
  it("shows the server's error, then signs in and returns to the page that was asked for", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 401, body: { detail: "not authenticated" } });
    server.reply("POST", "/api/v1/auth/login", { status: 401, body: { detail: "invalid username or password" } });
    server.reply("GET", "/api/v1/hosts/7", { status: 200, body: hostDetail({ id: 7, hostname: "edge-7" }) });
    server.reply("GET", "/api/v1/hosts/7/series", { status: 200, body: series([]) });
    const { router } = renderApp("/hosts/7?range=6h", server.origin);

    const username = await screen.findByLabelText("Username");
    await userEvent.type(username, "alice");
    await userEvent.type(screen.getByLabelText("Password"), "wrong");
    await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("invalid username or password");
    expect(router.state.location.pathname).toBe("/login");

    server.reply("POST", "/api/v1/auth/login", { status: 200, body: user({ username: "alice", role: "viewer" }) });
    await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
    expect(await screen.findByRole("heading", { name: "edge-7" })).toBeInTheDocument();
    expect(router.state.location.pathname + router.state.location.search).toBe("/hosts/7?range=6h");
    const login = server.requests.find((r) => r.url === "/api/v1/auth/login");
    expect(JSON.parse(login?.body ?? "{}")).toEqual({ username: "alice", password: "wrong" });
  });
});

describe("roles", () => {
  it("tells a viewer that an admin page needs the admin role, and hides admin links", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer", username: "vic" }) });
    renderApp("/settings/users", server.origin);
    expect(await screen.findByText("You need the admin role to view this page.")).toBeInTheDocument();
    const nav = screen.getByRole("navigation", { name: "main" });
    expect(within(nav).getByRole("link", { name: "Fleet" })).toBeInTheDocument();
    expect(within(nav).queryByRole("link", { name: "Users" })).toBeNull();
    expect(server.requests.some((r) => r.url.startsWith("/api/v1/users"))).toBe(false);
  });

  it("shows admin links and the user and role in the header to an admin", async () => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "admin", username: "root-ann" }) });
    server.reply("GET", "/api/v1/audit", {
      status: 200,
      body: [{ id: 1, ts: "2026-11-21T10:00:00Z", actor: "root-ann", action: "login", target: "user:1", detail: {} }],
    });
    renderApp("/audit", server.origin);
    expect(await screen.findByRole("cell", { name: "login" })).toBeInTheDocument();
    const nav = screen.getByRole("navigation", { name: "main" });
    for (const name of ["Agents", "Users", "Audit"]) expect(within(nav).getByRole("link", { name })).toBeInTheDocument();
    expect(screen.getByRole("banner", { name: "account" })).toHaveTextContent("root-ann");
    expect(screen.getByRole("banner", { name: "account" })).toHaveTextContent("admin");
  });
});

describe("fleet page", () => {
  beforeEach(() => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "viewer" }) });
  });

  it("asks the server for the sort of a clicked header and flags drops", async () => {
    server.reply("GET", "/api/v1/fleet", {
      status: 200,
      body: fleetPage([
        fleetHost({ id: 1, hostname: "a-host", req_per_s: 5, drops_per_s: 0 }),
        fleetHost({ id: 2, hostname: "b-host", req_per_s: 500, drops_per_s: 3.5, status: "stale", status_reason: "no push for 45 s" }),
      ]),
    });
    const { router } = renderApp("/", server.origin);
    const table = await screen.findByRole("table", { name: "fleet" });
    await userEvent.click(within(table).getByRole("button", { name: /Req\/s/ }));
    await waitFor(() => expect(router.state.location.search).toBe("?sort=req_per_s&order=desc"));
    await waitFor(() =>
      expect(server.requests.some((r) => r.url.includes("sort=req_per_s&order=desc&limit=50&offset=0"))).toBe(true),
    );
    expect(within(table).getByRole("columnheader", { name: /Req\/s/ })).toHaveAttribute("aria-sort", "descending");
    expect(within(table).getByRole("cell", { name: "3.5/s" })).toHaveClass("alarm");
    expect(within(table).getByRole("cell", { name: "0/s" })).not.toHaveClass("alarm");
    expect(within(table).getByText("stale").closest("[title]")).toHaveAttribute("title", "no push for 45 s");
  });

  it("puts a chosen label filter in the URL and in the API request", async () => {
    const { router } = renderApp("/", server.origin);
    await screen.findByRole("table", { name: "fleet" });
    await userEvent.selectOptions(screen.getByLabelText("Filter by label"), "env:prod");
    await waitFor(() => expect(router.state.location.search).toBe("?label=env%3Aprod"));
    await waitFor(() =>
      expect(server.requests.some((r) => r.url.startsWith("/api/v1/fleet?label=env%3Aprod&sort=hostname"))).toBe(true),
    );
    expect(screen.getByRole("list", { name: "active label filters" })).toHaveTextContent("env=prod");
  });
});

describe("host page", () => {
  beforeEach(() => {
    server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ role: "operator" }) });
    server.reply("GET", "/api/v1/hosts/3/series", { status: 200, body: series([seriesPoint()], { host_id: 3 }) });
  });

  it("explains a missing stub_status and asks the API for the range in the URL", async () => {
    server.reply("GET", "/api/v1/hosts/3", {
      status: 200,
      body: hostDetail({
        id: 3,
        stub_status_available: false,
        stub_status_error: "no stub_status location found in the nginx -T output",
      }),
    });
    const { router } = renderApp("/hosts/3?range=15m", server.origin);
    const banner = await screen.findByText(/stub_status is unavailable/);
    expect(banner.closest("[role=alert]")).toHaveTextContent("location = /nginx_status { stub_status;");
    await userEvent.click(screen.getByRole("button", { name: "24 h" }));
    expect(router.state.location.search).toBe("?range=24h");
    await waitFor(() =>
      expect(server.requests.some((r) => r.url === "/api/v1/hosts/3/series?range=24h")).toBe(true),
    );
  });

  it("keeps the chosen time range when switching between the Metrics and Config tabs", async () => {
    server.reply("GET", "/api/v1/hosts/3", { status: 200, body: hostDetail({ id: 3 }) });
    const { router } = renderApp("/hosts/3?range=6h", server.origin);
    await userEvent.click(await screen.findByRole("link", { name: "Config" }));
    expect(router.state.location.pathname + router.state.location.search).toBe("/hosts/3/config?range=6h");
    await userEvent.click(screen.getByRole("link", { name: "Metrics" }));
    expect(router.state.location.pathname + router.state.location.search).toBe("/hosts/3?range=6h");
  });

  it("saves an added label with PATCH and the CSRF header, and keeps bad input with its error", async () => {
    server.reply("GET", "/api/v1/hosts/3", { status: 200, body: hostDetail({ id: 3, labels: { env: "prod" } }) });
    server.reply("PATCH", "/api/v1/hosts/3", {
      status: 200,
      body: hostDetail({ id: 3, labels: { env: "prod", role: "edge" } }),
    });
    renderApp("/hosts/3", server.origin);
    const input = await screen.findByPlaceholderText("key=value");
    await userEvent.type(input, "role");
    await userEvent.click(screen.getByRole("button", { name: "Add label" }));
    expect(await screen.findByRole("alert")).toHaveTextContent('"role" is not key=value');
    expect(input).toHaveValue("role");

    await userEvent.type(input, "=edge");
    await userEvent.click(screen.getByRole("button", { name: "Add label" }));
    expect(await screen.findByText("role=edge")).toBeInTheDocument();
    const patch = server.requests.find((r) => r.method === "PATCH");
    expect(JSON.parse(patch?.body ?? "{}")).toEqual({ labels: { env: "prod", role: "edge" } });
    expect(patch?.headers["x-csrf-token"]).toBe("test-csrf");
    expect(input).toHaveValue("");
  });
});
