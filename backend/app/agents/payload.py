"""Turning a raw push body into a PushPayload: size limit, gunzip, JSON, validation."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterable
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from app.agents.schemas import PushPayload

# A message listing hundreds of errors helps nobody; the first few point at the bug.
MAX_REPORTED_ERRORS = 10


class PayloadRejected(Exception):
    """The push body cannot be accepted; status_code and detail go back to the agent."""

    def __init__(self, status_code: int, detail: str) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail


def _too_large(max_bytes: int, what: str) -> PayloadRejected:
    """The 413 for a body above the limit."""
    return PayloadRejected(413, f"{what} is larger than the limit of {max_bytes} bytes")


async def read_limited(chunks: AsyncIterable[bytes], *, max_bytes: int) -> bytes:
    """Collect a request body, stopping as soon as it grows past max_bytes."""
    received = bytearray()
    async for chunk in chunks:
        received += chunk
        if len(received) > max_bytes:
            raise _too_large(max_bytes, "request body")
    return bytes(received)


def gunzip_limited(body: bytes, *, max_bytes: int) -> bytes:
    """Decompress a gzip body without ever holding more than max_bytes + 1 of output."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        output = inflater.decompress(body, max_bytes + 1)
        if len(output) > max_bytes:
            raise _too_large(max_bytes, "decompressed body")
        if not inflater.eof:
            raise PayloadRejected(422, "invalid gzip body: the stream is truncated")
    except zlib.error as error:
        raise PayloadRejected(422, f"invalid gzip body: {error}") from error
    return output


def decode_body(body: bytes, *, content_encoding: str | None, max_bytes: int) -> bytes:
    """Undo Content-Encoding (identity or gzip) within the size limit."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding == "gzip":
        return gunzip_limited(body, max_bytes=max_bytes)
    if encoding == "identity":
        return body
    raise PayloadRejected(422, f"unsupported Content-Encoding {encoding!r}; use gzip or none")


def format_location(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as samples[2].stub_status.accepts."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part == "[key]":
            path += " (key)"
        else:
            path += f".{part}" if path else part
    return path or "body"


def _describe(error: ErrorDetails) -> str:
    """An operator-friendly wording of one pydantic error."""
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    kind = error["type"]
    wording = {
        "missing": "is required",
        "greater_than_equal": f"must be >= {ctx.get('ge')}",
        "greater_than": f"must be > {ctx.get('gt')}",
        "less_than_equal": f"must be <= {ctx.get('le')}",
        "less_than": f"must be < {ctx.get('lt')}",
        "int_type": "must be an integer",
        "int_from_float": "must be an integer",
        "float_type": "must be a number",
        "finite_number": "must be a finite number",
        "bool_type": "must be true or false",
        "string_type": "must be a string",
        "dict_type": "must be an object",
        "list_type": "must be an array",
        "model_type": "must be an object",
        "model_attributes_type": "must be an object",
        "string_too_long": f"must be at most {ctx.get('max_length')} characters",
        "string_too_short": f"must be at least {ctx.get('min_length')} characters",
        "string_pattern_mismatch": f"must match {ctx.get('pattern')}",
        "too_long": f"must have at most {ctx.get('max_length')} items",
        "too_short": f"must have at least {ctx.get('min_length')} items",
        "timezone_aware": "must carry a time zone (e.g. a trailing Z)",
    }.get(kind)
    if wording is None:
        wording = error["msg"].removeprefix("Value error, ")
    return f"{format_location(error['loc'])}: {wording}"


def describe_validation_error(error: ValidationError) -> str:
    """All problems of a rejected payload in one readable line."""
    problems = error.errors(include_url=False)
    described = [_describe(problem) for problem in problems[:MAX_REPORTED_ERRORS]]
    if len(problems) > MAX_REPORTED_ERRORS:
        described.append(f"and {len(problems) - MAX_REPORTED_ERRORS} more problems")
    return "; ".join(described)


def parse_push_payload(raw: bytes) -> PushPayload:
    """Parse and validate a decoded push body, or raise PayloadRejected(422)."""
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise PayloadRejected(422, f"invalid JSON: {error}") from error
    if not isinstance(document, dict):
        raise PayloadRejected(422, "body: must be a JSON object")
    try:
        payload = PushPayload.model_validate(document)
    except ValidationError as error:
        raise PayloadRejected(422, describe_validation_error(error)) from error
    # JSON can only carry NUL escaped; the byte search keeps the common case free.
    if b"\\u0000" in raw:
        _replace_nul(payload)
    return payload


def _replace_nul(value: Any) -> Any:
    """value with NUL characters replaced by U+FFFD, models changed in place.

    PostgreSQL text and jsonb cannot hold NUL. Refusing the push would lose its samples on every
    retry (a config dump with a binary blob is resent until stored), so the character is
    replaced after validation, which keeps the agent's config hash as sent."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            setattr(value, name, _replace_nul(getattr(value, name)))
        if value.model_extra:
            extra = _replace_nul(value.model_extra)
            value.model_extra.clear()
            value.model_extra.update(extra)
        return value
    if isinstance(value, list):
        return [_replace_nul(item) for item in value]
    if isinstance(value, dict):
        return {_replace_nul(key): _replace_nul(item) for key, item in value.items()}
    return value
