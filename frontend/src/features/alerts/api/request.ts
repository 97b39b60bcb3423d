/**
 * Calls to the alerting API through the app's client (cookies, CSRF header, ApiError), by plain
 * path: the generated schema does not have these endpoints yet. Once `make openapi` brings them,
 * the hooks switch to the typed `api.GET("/api/v1/alerts/…")` calls like the other features.
 */
import { type ApiClient, unwrap } from "../../../api/client";

export const API = "/api/v1";

type Query = Record<string, string | number | boolean | null | undefined>;

interface LooseInit {
  params?: { query?: Query };
  body?: unknown;
}

type LooseCall = (path: string, init?: LooseInit) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

type Method = "GET" | "POST" | "PUT" | "DELETE";

/** Send one request and return its JSON (undefined for 204), or throw ApiError with the server's words. */
export async function request<T>(
  api: ApiClient,
  method: Method,
  path: string,
  init: { query?: Query; body?: unknown } = {},
): Promise<T> {
  const call = (api as unknown as Record<Method, LooseCall>)[method];
  const query = init.query
    ? Object.fromEntries(Object.entries(init.query).filter(([, value]) => value !== null && value !== undefined))
    : undefined;
  const options: LooseInit = {};
  if (query) options.params = { query };
  if (init.body !== undefined) options.body = init.body;
  return (await unwrap(call(`${API}${path}`, options))) as T;
}
