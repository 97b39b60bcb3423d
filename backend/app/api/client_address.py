"""The address of the client behind a request, as the trusted-proxy middleware resolved it."""

from __future__ import annotations

from fastapi import Request

from app.core.config import get_settings

UNKNOWN_ADDRESS = "unknown"


def trusted_proxies() -> list[str]:
    """The peers whose X-Forwarded-For is believed, from NGINX_FLEET_TRUSTED_PROXIES."""
    return [item.strip() for item in get_settings().trusted_proxies.split(",") if item.strip()]


def client_address(request: Request) -> str:
    """The client's address: the peer, or the right-most hop a trusted proxy did not add."""
    # uvicorn's ProxyHeadersMiddleware (installed by create_app) already replaced the peer by
    # the right-most untrusted X-Forwarded-For hop when, and only when, the peer is trusted.
    return request.client.host if request.client else UNKNOWN_ADDRESS
