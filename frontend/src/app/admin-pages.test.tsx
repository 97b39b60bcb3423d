import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { tokenState } from "../features/enrollment/components/TokenList";
import { type TestApiServer, startApiServer } from "../test/api-server";
import { fleetPage, user } from "../test/factories";
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
  server.reply("GET", "/api/v1/auth/me", { status: 200, body: user({ id: 1, username: "root", role: "admin" }) });
});

const token = {
  id: 4,
  labels: { env: "prod" },
  created_at: "2026-11-21T09:00:00Z",
  expires_at: "2999-01-01T00:00:00Z",
  uses: 0,
  max_uses: 1,
  revoked: false,
};

describe("Settings → Agents", () => {
  it("checks the form, creates a token and shows the commands once with a warning", async () => {
    server.reply("GET", "/api/v1/enrollment-tokens", { status: 200, body: [] });
    server.reply("POST", "/api/v1/enrollment-tokens", {
      status: 201,
      body: {
        id: 5,
        token: "nfe_secret",
        expires_at: "2026-11-22T10:00:00Z",
        max_uses: 2,
        labels: { env: "prod" },
        agent_wheel: {
          filename: "nginx_fleet_agent-0.1.0-py3-none-any.whl",
          version: "0.1.0",
          url: "http://127.0.0.1:1/downloads/nginx_fleet_agent-0.1.0-py3-none-any.whl",
          sha256: "abababababababababababababababababababababababababababababababab",
          size_bytes: 35168,
        },
        install_command:
          "python3 -m venv /opt/nginx-fleet-agent && /opt/nginx-fleet-agent/bin/pip install 'http://127.0.0.1:1/downloads/nginx_fleet_agent-0.1.0-py3-none-any.whl#sha256=abababababababababababababababababababababababababababababababab'",
        enroll_command: "nginx-fleet-agent enroll --server http://127.0.0.1:1 --token nfe_secret",
      },
    });
    renderApp("/settings/agents", server.origin);
    const labels = await screen.findByLabelText("Labels for hosts enrolled with it");
    await userEvent.type(labels, "env=prod, oops");
    await userEvent.click(screen.getByRole("button", { name: "Create enrolment token" }));
    expect(await screen.findByRole("alert")).toHaveTextContent('"oops" is not key=value');
    expect(server.requests.some((r) => r.method === "POST")).toBe(false);

    await userEvent.clear(labels);
    await userEvent.type(labels, "env=prod");
    await userEvent.clear(screen.getByLabelText("Max uses"));
    await userEvent.type(screen.getByLabelText("Max uses"), "2");
    await userEvent.click(screen.getByRole("button", { name: "Create enrolment token" }));

    const created = await screen.findByLabelText("new enrolment token");
    expect(within(created).getByRole("alert")).toHaveTextContent("shown only once");
    expect(within(created).getByText(/^nginx-fleet-agent enroll /)).toHaveTextContent("--token nfe_secret");
    expect(within(created).getByText(/pip install 'http:\/\/127\.0\.0\.1:1\/downloads\//)).toHaveTextContent(
      "#sha256=abababababababababababababababababababababababababababababababab",
    );
    expect(within(created).getByLabelText("SHA-256")).toHaveTextContent("abababababababababababababababababababababababababababababababab");
    expect(within(created).getByRole("link", { name: "nginx_fleet_agent-0.1.0-py3-none-any.whl" })).toHaveAttribute(
      "href",
      "http://127.0.0.1:1/downloads/nginx_fleet_agent-0.1.0-py3-none-any.whl",
    );
    const post = server.requests.find((r) => r.method === "POST");
    expect(JSON.parse(post?.body ?? "{}")).toEqual({ labels: { env: "prod" }, expires_in_hours: 24, max_uses: 2 });

    await userEvent.click(within(created).getByRole("button", { name: "Done" }));
    expect(screen.queryByText(/nfe_secret/)).toBeNull();
  });

  it("says so when the server has no agent wheel to offer, instead of a command", async () => {
    server.reply("GET", "/api/v1/enrollment-tokens", { status: 200, body: [] });
    server.reply("POST", "/api/v1/enrollment-tokens", {
      status: 201,
      body: {
        id: 6,
        token: "nfe_other",
        expires_at: "2026-11-22T10:00:00Z",
        max_uses: 1,
        labels: {},
        agent_wheel: null,
        install_command: null,
        enroll_command: "nginx-fleet-agent enroll --server http://127.0.0.1:1 --token nfe_other",
      },
    });
    renderApp("/settings/agents", server.origin);
    await userEvent.click(await screen.findByRole("button", { name: "Create enrolment token" }));
    const created = await screen.findByLabelText("new enrolment token");
    expect(within(created).getByText(/no agent package to offer/)).toBeInTheDocument();
    expect(within(created).queryByText(/pip install/)).toBeNull();
  });

  it("revokes a token after confirmation", async () => {
    server.reply("GET", "/api/v1/enrollment-tokens", { status: 200, body: [token] });
    server.reply("DELETE", "/api/v1/enrollment-tokens/4", { status: 204 });
    vi.spyOn(window, "confirm").mockReturnValue(true);
    renderApp("/settings/agents", server.origin);
    await userEvent.click(await screen.findByRole("button", { name: "Revoke token 4" }));
    await waitFor(() =>
      expect(server.requests.some((r) => r.method === "DELETE" && r.url === "/api/v1/enrollment-tokens/4")).toBe(true),
    );
  });

  it("names why a token can no longer enrol", () => {
    const now = Date.parse("2026-11-21T10:00:00Z");
    expect(tokenState(token, now)).toBe("active");
    expect(tokenState({ ...token, revoked: true }, now)).toBe("revoked");
    expect(tokenState({ ...token, uses: 1 }, now)).toBe("used up");
    expect(tokenState({ ...token, expires_at: "2026-11-21T09:59:59Z" }, now)).toBe("expired");
  });
});

describe("Settings → Users", () => {
  beforeEach(() => {
    server.reply("GET", "/api/v1/users", {
      status: 200,
      body: [user({ id: 1, username: "root", role: "admin" }), user({ id: 2, username: "bob", role: "viewer" })],
    });
  });

  it("refuses a short password locally and shows the server's refusal otherwise, keeping the input", async () => {
    server.reply("POST", "/api/v1/users", { status: 409, body: { detail: "user bob already exists" } });
    renderApp("/settings/users", server.origin);
    const form = await screen.findByRole("form", { name: "create user" });
    await userEvent.type(within(form).getByLabelText("Username"), "bob");
    await userEvent.type(within(form).getByLabelText("Password"), "short");
    await userEvent.click(within(form).getByRole("button", { name: "Create user" }));
    expect(within(form).getByRole("alert")).toHaveTextContent("at least 12 characters");

    await userEvent.type(within(form).getByLabelText("Password"), "-but-longer-now");
    await userEvent.selectOptions(within(form).getByLabelText("Role"), "operator");
    await userEvent.click(within(form).getByRole("button", { name: "Create user" }));
    expect(await within(form).findByText("user bob already exists")).toBeInTheDocument();
    expect(within(form).getByLabelText("Username")).toHaveValue("bob");
    const post = server.requests.find((r) => r.method === "POST");
    expect(JSON.parse(post?.body ?? "{}")).toEqual({ username: "bob", password: "short-but-longer-now", role: "operator" });
  });

  it("changes another user's role, deletes them, and protects the admin's own account", async () => {
    server.reply("PATCH", "/api/v1/users/2", { status: 200, body: user({ id: 2, username: "bob", role: "operator" }) });
    server.reply("DELETE", "/api/v1/users/2", { status: 204 });
    vi.spyOn(window, "confirm").mockReturnValue(true);
    renderApp("/settings/users", server.origin);
    await userEvent.selectOptions(await screen.findByLabelText("Role of bob"), "operator");
    await waitFor(() => expect(server.requests.some((r) => r.method === "PATCH")).toBe(true));
    expect(JSON.parse(server.requests.find((r) => r.method === "PATCH")?.body ?? "{}")).toEqual({ role: "operator" });

    expect(screen.getByLabelText("Role of root")).toBeDisabled();
    expect(screen.queryByRole("button", { name: "Delete user root" })).toBeNull();
    await userEvent.click(screen.getByRole("button", { name: "Delete user bob" }));
    await waitFor(() => expect(server.requests.some((r) => r.method === "DELETE" && r.url === "/api/v1/users/2")).toBe(true));
  });
});

describe("logout", () => {
  it("ends the session and shows the login page", async () => {
    server.reply("GET", "/api/v1/fleet", { status: 200, body: fleetPage([]) });
    server.reply("GET", "/api/v1/fleet/labels", { status: 200, body: {} });
    server.reply("POST", "/api/v1/auth/logout", { status: 204 });
    const { router } = renderApp("/", server.origin);
    const logout = await screen.findByRole("button", { name: "Log out" });
    server.reply("GET", "/api/v1/auth/me", { status: 401, body: { detail: "not authenticated" } });
    await userEvent.click(logout);
    await waitFor(() => expect(router.state.location.pathname).toBe("/login"));
    expect(await screen.findByRole("button", { name: "Sign in" })).toBeInTheDocument();
    expect(server.requests.find((r) => r.url === "/api/v1/auth/logout")?.headers["x-csrf-token"]).toBe("test-csrf");
  });
});
