"""HTTP to the control plane: push (gzip, bearer token), ping and enrol, with reply classes."""

from __future__ import annotations

import enum
import gzip
import json
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from nginx_fleet_agent import __version__

PUSH_PATH = "/api/v1/agent/push"
PING_PATH = "/api/v1/agent/ping"
ENROLL_PATH = "/api/v1/agent/enroll"


class Outcome(enum.Enum):
    """What the agent does with a batch after a push attempt."""

    # 2xx: every sample was stored, a duplicate, or refused alone (listed in the reply); remove
    # the batch from the spool.
    DELIVERED = "delivered"
    RETRY = "retry"  # 5xx, 429, network error: keep it, retry after a backoff delay
    DROP = "drop"  # 413: too large; send it without the dump, then in smaller batches
    STOP = "stop"  # 401/403: the token is not valid for this host; stop pushing
    # Other 4xx, 422 included (the envelope itself was refused, never one sample): keep the
    # samples, log the reason loudly, retry after a backoff delay.
    REJECTED = "rejected"


@dataclass(frozen=True)
class PushResult:
    """The outcome of one push, with the parsed reply or the reason it failed."""

    outcome: Outcome
    status: int | None
    detail: str
    reply: dict[str, Any] | None = None
    retry_after_s: float | None = None


class TransportError(Exception):
    """A request to the control plane failed; the message says why in plain words."""


def classify(status: int) -> Outcome:
    """Map an HTTP status to what the agent should do with the batch."""
    if 200 <= status < 300:
        return Outcome.DELIVERED
    if status in (401, 403):
        return Outcome.STOP
    if status == 413:
        return Outcome.DROP
    if status == 429 or status >= 500:
        return Outcome.RETRY
    return Outcome.REJECTED


def make_verify(tls_verify: bool, ca_file: Path | None) -> ssl.SSLContext | bool:
    """The httpx `verify` value for the configured TLS settings."""
    if not tls_verify:
        return False
    if ca_file is not None:
        return ssl.create_default_context(cafile=str(ca_file))
    return True


class Transport:
    """A connection to one control-plane server."""

    def __init__(
        self,
        server_url: str,
        *,
        timeout_s: float,
        verify: ssl.SSLContext | bool = True,
        token: str | None = None,
    ) -> None:
        headers = {"User-Agent": f"nginx-fleet-agent/{__version__}"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.Client(
            base_url=server_url.rstrip("/"), timeout=timeout_s, verify=verify, headers=headers
        )

    def push(self, payload: dict[str, Any]) -> PushResult:
        """POST one push body, gzip-compressed, and classify the reply."""
        body = gzip.compress(json.dumps(payload, separators=(",", ":")).encode(), compresslevel=6)
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        try:
            response = self._client.post(PUSH_PATH, content=body, headers=headers)
        except httpx.HTTPError as exc:
            return PushResult(Outcome.RETRY, None, describe_error(exc))
        outcome = classify(response.status_code)
        if outcome is Outcome.DELIVERED:
            return PushResult(outcome, response.status_code, "ok", _json_object(response))
        return PushResult(
            outcome,
            response.status_code,
            f"HTTP {response.status_code}: {_detail(response)}",
            retry_after_s=_retry_after(response),
        )

    def ping(self) -> dict[str, Any]:
        """POST /ping with the host token; raise TransportError with the reason on failure."""
        return self._post_json(PING_PATH, {}, expected=200)

    def enroll(self, request: dict[str, Any]) -> dict[str, Any]:
        """Exchange an enrolment token for a host token."""
        return self._post_json(ENROLL_PATH, request, expected=201)

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()

    def _post_json(self, path: str, body: dict[str, Any], *, expected: int) -> dict[str, Any]:
        try:
            response = self._client.post(path, json=body)
        except httpx.HTTPError as exc:
            raise TransportError(f"{self._client.base_url}{path}: {describe_error(exc)}") from exc
        if response.status_code != expected:
            raise TransportError(
                f"{self._client.base_url}{path}: HTTP {response.status_code}: {_detail(response)}"
            )
        reply = _json_object(response)
        if reply is None:
            raise TransportError(f"{self._client.base_url}{path}: reply is not a JSON object")
        return reply


def describe_error(exc: httpx.HTTPError) -> str:
    """A network error in an operator's words."""
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({exc})"
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    return f"request failed ({type(exc).__name__}: {exc})"


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _detail(response: httpx.Response) -> str:
    data = _json_object(response)
    if data is not None and "detail" in data:
        return str(data["detail"])
    return response.text.strip()[:200] or response.reason_phrase


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None
