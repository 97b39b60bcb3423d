"""ASGI middleware: CSRF double-submit check and security headers (streaming-safe)."""

from __future__ import annotations

from http.cookies import CookieError, SimpleCookie

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.auth.cookies import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE
from app.core.security import tokens_equal

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSRF_EXEMPT_PATHS = frozenset({"/api/v1/auth/login"})
CSRF_EXEMPT_PREFIXES = ("/api/v1/agent/",)


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
