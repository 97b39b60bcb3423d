"""A signed-in client of the web container, sending cookies and the CSRF header as the UI does."""

from __future__ import annotations

from http.cookies import SimpleCookie
from typing import Any

import httpx

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class WebSession:
    """httpx against http://127.0.0.1:PORT/api/v1 with the session cookies set by /auth/login.

    Production sets the cookies Secure. Browsers send Secure cookies to http://127.0.0.1 (a
    trustworthy origin), Python's cookie jar does not: this class keeps them itself."""

    def __init__(self, base_url: str) -> None:
        self.client = httpx.Client(base_url=f"{base_url}/api/v1", timeout=15.0)
        self.cookies: dict[str, str] = {}
        self.cookie_flags: dict[str, str] = {}

    def close(self) -> None:
        """Close the connection pool."""
        self.client.close()

    def login(self, username: str, password: str) -> httpx.Response:
        """POST /auth/login and keep the cookies it sets."""
        response = self.client.post(
            "/auth/login", json={"username": username, "password": password}
        )
        for header in response.headers.get_list("set-cookie"):
            parsed = SimpleCookie()
            parsed.load(header)
            for name, morsel in parsed.items():
                self.cookies[name] = morsel.value
                self.cookie_flags[name] = header
        return response

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A request with the session cookies, and X-CSRF-Token on unsafe methods."""
        headers = dict(kwargs.pop("headers", {}) or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if method.upper() in UNSAFE_METHODS and "nf_csrf" in self.cookies:
            headers["X-CSRF-Token"] = self.cookies["nf_csrf"]
        return self.client.request(method, path, headers=headers, **kwargs)

    def get_json(self, path: str, **kwargs: Any) -> Any:
        """GET that must answer 200; its JSON."""
        response = self.request("GET", path, **kwargs)
        if response.status_code != 200:
            raise AssertionError(f"GET {path}: HTTP {response.status_code} {response.text[:300]}")
        return response.json()
