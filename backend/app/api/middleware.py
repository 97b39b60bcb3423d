"""ASGI middleware: request body bounds, CSRF double-submit check and security headers."""

from __future__ import annotations

from http.cookies import CookieError, SimpleCookie

import orjson
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.auth.cookies import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE
from app.core.config import get_settings
from app.core.security import tokens_equal

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSRF_EXEMPT_PATHS = frozenset({"/api/v1/auth/login"})
CSRF_EXEMPT_PREFIXES = ("/api/v1/agent/",)
# Routes that read, bound and decode their own body while it streams in (gzip, larger limit).
SELF_READ_PATHS = frozenset({"/api/v1/agent/push"})


def _cookies(headers: Headers) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except CookieError:
        return {}
    return {name: morsel.value for name, morsel in jar.items()}


def _is_exempt(path: str) -> bool:
    return path in CSRF_EXEMPT_PATHS or path.startswith(CSRF_EXEMPT_PREFIXES)


class CSRFMiddleware:
    """Reject unsafe cookie-authenticated requests whose X-CSRF-Token differs from nf_csrf."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the double-submit token before the request reaches a route."""
        if (
            scope["type"] == "http"
            and scope["method"] in UNSAFE_METHODS
            and not _is_exempt(scope["path"])
        ):
            headers = Headers(scope=scope)
            cookies = _cookies(headers)
            # Only cookie-authenticated requests can be forged by another site.
            if SESSION_COOKIE in cookies:
                cookie_token = cookies.get(CSRF_COOKIE, "")
                header_token = headers.get(CSRF_HEADER, "")
                if not cookie_token or not tokens_equal(cookie_token, header_token):
                    response = JSONResponse(
                        {"detail": "CSRF token missing or wrong"}, status_code=403
                    )
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)


# The UI is built by Vite into static files: no inline scripts, but charts set inline styles.
UI_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; "
    "form-action 'self'"
)


class SecurityHeadersMiddleware:
    """Add headers that stop sniffing, framing and referrer leaks to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Wrap send to add the headers when the response starts."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        is_api = scope["path"].startswith("/api/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("X-Frame-Options", "DENY")
                headers.setdefault("Referrer-Policy", "same-origin")
                if is_api:
                    headers.setdefault("Cache-Control", "no-store")
                else:
                    headers.setdefault("Content-Security-Policy", UI_CONTENT_SECURITY_POLICY)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _is_json(content_type: str | None) -> bool:
    """Whether a route would parse this body as JSON (FastAPI does when no type is given)."""
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class RequestBodyMiddleware:
    """Bound every API request body and refuse bodies that are not strict JSON.

    Python's json module, which the routes use, accepts NaN, Infinity and lone UTF-16
    surrogates; none of them is JSON a client means to send, and each one fails later where
    it is stored or echoed (a 500). orjson refuses them, here, once, before any route runs."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the whole (small) body, check it, then hand it on unchanged."""
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope["method"] not in UNSAFE_METHODS
            or not path.startswith("/api/")
            or path in SELF_READ_PATHS
        ):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        limit = get_settings().api_body_max_bytes
        body = await _read_bounded(receive, headers, limit)
        refusal = _refusal(body, limit, headers.get("content-type"))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()  # after the body: wait for the disconnect
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _read_bounded(receive: Receive, headers: Headers, limit: int) -> bytes | None:
    """The whole body, or None as soon as it is known to exceed limit."""
    try:
        if int(headers.get("content-length", "0")) > limit:
            return None
    except ValueError:
        pass
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _refusal(body: bytes | None, limit: int, content_type: str | None) -> JSONResponse | None:
    """The error reply for a body too large or not strict JSON, else None."""
    if body is None:
        return JSONResponse(
            {"detail": f"request body is larger than the limit of {limit} bytes"}, status_code=413
        )
    if body and _is_json(content_type):
        try:
            orjson.loads(body)
        except orjson.JSONDecodeError as error:
            return JSONResponse(
                {"detail": f"request body is not valid JSON: {error}"}, status_code=422
            )
    return None
