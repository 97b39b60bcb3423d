/** Typed API client: session cookies, CSRF double-submit header, errors as ApiError. */
import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "./schema";

export const CSRF_COOKIE = "nf_csrf";
export const CSRF_HEADER = "X-CSRF-Token";

const UNSAFE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** An HTTP error reply, carrying the server's `detail` as its message. */
export class ApiError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/** Read one cookie from a `document.cookie` style string. */
export function readCookie(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** Turn any error body (FastAPI string detail, 422 list, plain text) into one readable line. */
export function describeErrorBody(status: number, body: unknown): string {
  if (body && typeof body === "object" && "detail" in body) {
    const detail = body.detail;
    if (typeof detail === "string") return detail;
    if (Array.isArray(detail)) {
      return detail
        .map((item: unknown) => {
          if (item && typeof item === "object" && "msg" in item) {
            const { loc, msg } = item as { loc?: unknown; msg: unknown };
            const where = Array.isArray(loc) ? loc.filter((p) => p !== "body").join(".") : "";
            return where ? `${where}: ${String(msg)}` : String(msg);
          }
          return JSON.stringify(item);
        })
        .join("; ");
    }
  }
  if (typeof body === "string" && body.trim()) return body.trim();
  return `request failed with HTTP ${status}`;
}

/** Adds the CSRF header to unsafe requests, read from the nf_csrf cookie at send time. */
export function csrfMiddleware(getCookies: () => string): Middleware {
  return {
    onRequest({ request }) {
      if (!UNSAFE_METHODS.has(request.method.toUpperCase())) return undefined;
      const token = readCookie(getCookies(), CSRF_COOKIE);
      if (token) request.headers.set(CSRF_HEADER, token);
      return request;
    },
  };
}

export interface ApiClientOptions {
  baseUrl?: string;
  getCookies?: () => string;
  fetch?: typeof globalThis.fetch;
}

/** Create a client bound to the API; cookies ride along with every request. */
export function createApiClient(options: ApiClientOptions = {}) {
  const client = createClient<paths>({
    baseUrl: options.baseUrl ?? "",
    credentials: "include",
    fetch: options.fetch,
  });
  client.use(csrfMiddleware(options.getCookies ?? (() => document.cookie)));
  return client;
}

export type ApiClient = ReturnType<typeof createApiClient>;

/** Return the data of a reply, or throw ApiError with the server's detail. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(response.status, describeErrorBody(response.status, error));
  return data as T;
}

