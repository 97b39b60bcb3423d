"""What every channel returns, and the HTTP plumbing the webhook and Slack channels share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

# Bounds one send: a channel that never answers costs this much, then the delivery retries.
SEND_TIMEOUT_S = 10.0
# Retry-After beyond this is treated as this: the delivery's own retry budget still applies.
MAX_RETRY_AFTER_S = 3600.0
# Of a failed reply's body, this much goes into the attempt's error text.
ERROR_BODY_CHARS = 300
USER_AGENT = "nginx-fleet-notify/1"
REDACTED = "[redacted]"


@dataclass(frozen=True)
class SendResult:
    """The outcome of one send: ok, or what failed and whether a retry can help."""

    ok: bool
    status_code: int | None = None
    error: str | None = None
    # What the receiver asked for (HTTP 429/503 Retry-After); None when it did not say.
    retry_after_s: float | None = None
    # True when retrying cannot help (a 4xx other than 408/429, bad settings, auth refused).
    permanent: bool = False


def redact(text: str, secrets: Iterable[str]) -> str:
    """text with every secret value replaced, so that errors never carry one into the API."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Retry-After in seconds from delay-seconds or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def http_failure_is_permanent(status_code: int) -> bool:
    """4xx other than 408 and 429 means the request itself is refused: a retry fails again."""
    return 300 <= status_code < 500 and status_code not in {408, 429}


def result_of_response(
    status_code: int, headers: httpx.Headers, body: bytes, secrets: Iterable[str]
) -> SendResult:
    """The SendResult of an HTTP reply: 2xx is ok, anything else an error with its body."""
    if 200 <= status_code < 300:
        return SendResult(ok=True, status_code=status_code)
    if 300 <= status_code < 400:
        detail = "the URL redirects elsewhere; configure the final address"
    else:
        text = body[:ERROR_BODY_CHARS].decode("utf-8", errors="replace").strip()
        detail = " ".join(text.split()) or "(no body)"
    return SendResult(
        ok=False,
        status_code=status_code,
        error=redact(f"HTTP {status_code}: {detail}", secrets),
        retry_after_s=parse_retry_after(headers.get("retry-after")),
        permanent=http_failure_is_permanent(status_code),
    )


def describe_exception(
    error: BaseException, secrets: Iterable[str], *, timeout_s: float = SEND_TIMEOUT_S
) -> str:
    """A one-line description of a failed send without any secret in it."""
    if isinstance(error, httpx.TimeoutException | TimeoutError):
        return redact(f"no answer within {timeout_s:g} s ({type(error).__name__})", secrets)
    text = str(error) or type(error).__name__
    return redact(f"{type(error).__name__}: {text}", secrets)


def post_json(
    url: str,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    secrets: Iterable[str] = (),
    timeout_s: float = SEND_TIMEOUT_S,
) -> SendResult:
    """POST body as JSON to url; every failure becomes a SendResult, nothing is raised."""
    secrets = [url, *secrets]
    try:
        with (
            httpx.Client(timeout=timeout_s, follow_redirects=False) as client,
            client.stream(
                "POST", url, json=body, headers={"User-Agent": USER_AGENT, **(headers or {})}
            ) as response,
        ):
            # Only the start of an error reply is read: a receiver cannot make us hold a huge
            # body, nor wait for one it drips; a success needs no body at all.
            kept = bytearray()
            if not response.is_success:
                for chunk in response.iter_bytes():
                    kept += chunk
                    if len(kept) >= ERROR_BODY_CHARS:
                        break
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as error:
        return SendResult(ok=False, error=describe_exception(error, secrets), permanent=True)
    except (httpx.HTTPError, OSError) as error:
        return SendResult(ok=False, error=describe_exception(error, secrets, timeout_s=timeout_s))
    return result_of_response(response.status_code, response.headers, bytes(kept), secrets)


def absolute_url(url: str, external_url: str) -> str:
    """url as given when absolute; a dashboard path (/alerts/7) joined to the external URL."""
    if url.startswith("/") and external_url:
        return external_url.rstrip("/") + url
    return url
