"""Turning a raw push body into a PushPayload: size limit, gunzip, JSON, validation.

The envelope (identity, facts, config, the types of `samples` and `gaps`) is all or nothing;
each sample and gap record is then validated on its own and refused alone when invalid."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterable
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from app.agents.errors import MalformedPayloadError, PayloadTooLargeError
from app.agents.schemas import (
    ActionReport,
    PushedGap,
    PushEnvelope,
    PushPayload,
    Rejection,
    Sample,
)

# A message listing hundreds of errors helps nobody; the first few point at the bug.
MAX_REPORTED_ERRORS = 10


def too_large(max_bytes: int, what: str) -> PayloadTooLargeError:
    """The 413 for a body above the limit."""
    return PayloadTooLargeError(f"{what} is larger than the limit of {max_bytes} bytes")


async def read_limited(chunks: AsyncIterable[bytes], *, max_bytes: int) -> bytes:
    """Collect a request body, stopping as soon as it grows past max_bytes."""
    received = bytearray()
    async for chunk in chunks:
        received += chunk
        if len(received) > max_bytes:
            raise too_large(max_bytes, "request body")
    return bytes(received)


def gunzip_limited(body: bytes, *, max_bytes: int) -> bytes:
    """Decompress a gzip body without ever holding more than max_bytes + 1 of output."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        output = inflater.decompress(body, max_bytes + 1)
        if len(output) > max_bytes:
            raise too_large(max_bytes, "decompressed body")
        if not inflater.eof:
            raise MalformedPayloadError("invalid gzip body: the stream is truncated")
    except zlib.error as error:
        raise MalformedPayloadError(f"invalid gzip body: {error}") from error
    return output


def decode_body(body: bytes, *, content_encoding: str | None, max_bytes: int) -> bytes:
    """Undo Content-Encoding (identity or gzip) within the size limit."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding == "gzip":
        return gunzip_limited(body, max_bytes=max_bytes)
    if encoding == "identity":
        return body
    raise MalformedPayloadError(f"unsupported Content-Encoding {encoding!r}; use gzip or none")


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


def _describe(error: ErrorDetails, prefix: tuple[int | str, ...] = ()) -> str:
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
    return f"{format_location((*prefix, *error['loc']))}: {wording}"


def describe_validation_error(error: ValidationError, prefix: tuple[int | str, ...] = ()) -> str:
    """All problems of a rejected payload (or of one item, located under prefix) in one line."""
    problems = error.errors(include_url=False)
    described = [_describe(problem, prefix) for problem in problems[:MAX_REPORTED_ERRORS]]
    if len(problems) > MAX_REPORTED_ERRORS:
        described.append(f"and {len(problems) - MAX_REPORTED_ERRORS} more problems")
    return "; ".join(described)


def parse_push_payload(raw: bytes) -> PushPayload:
    """Parse and validate a decoded push body; MalformedPayloadError when the envelope is bad.

    Invalid samples and gap records come back in `rejected`, the valid ones in order."""
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise MalformedPayloadError(f"invalid JSON: {error}") from error
    if not isinstance(document, dict):
        raise MalformedPayloadError("body: must be a JSON object")
    try:
        envelope = PushEnvelope.model_validate(document)
    except ValidationError as error:
        raise MalformedPayloadError(describe_validation_error(error)) from error
    # JSON can only carry NUL escaped; the byte search keeps the common case free.
    if b"\\u0000" in raw:
        _replace_nul(envelope)
    samples, rejected = _valid_samples(envelope.samples)
    gaps = []
    for index, item in enumerate(envelope.gaps):
        try:
            gaps.append(PushedGap.model_validate(item))
        except ValidationError as error:
            rejected.append(_rejection(error, ("gaps", index), seq=None))
    reports = []
    for index, item in enumerate(envelope.action_reports):
        try:
            reports.append(ActionReport.model_validate(item))
        except ValidationError as error:
            rejected.append(_rejection(error, ("action_reports", index), seq=None))
    # Every part is validated already (and the dump may hold replaced NULs since): no re-check.
    return PushPayload.model_construct(
        agent_id=envelope.agent_id,
        agent_version=envelope.agent_version,
        hostname=envelope.hostname,
        labels=envelope.labels,
        facts=envelope.facts,
        config=envelope.config,
        config_hash=envelope.config_hash,
        samples=samples,
        gaps=gaps,
        action_reports=reports,
        rejected=rejected,
    )


def _valid_samples(items: list[Any]) -> tuple[list[Sample], list[Rejection]]:
    """The samples that validate on their own and come after the previous one, and the rest."""
    valid: list[Sample] = []
    rejected: list[Rejection] = []
    for index, item in enumerate(items):
        seq = _seq_of(item)
        try:
            sample = Sample.model_validate(item)
        except ValidationError as error:
            rejected.append(_rejection(error, ("samples", index), seq=seq))
            continue
        if valid and sample.seq <= valid[-1].seq:
            # Samples come oldest first with increasing seq; anything else is a broken spool.
            rejected.append(
                Rejection(
                    seq=seq,
                    field=f"samples[{index}].seq",
                    reason=f"samples[{index}].seq: must be greater than {valid[-1].seq}, the seq "
                    "of the sample before it (samples are sent oldest first)",
                )
            )
            continue
        valid.append(sample)
    return valid, rejected


def _seq_of(item: Any) -> int | None:
    """The seq of a sample to name it by, when it has a usable one."""
    seq = item.get("seq") if isinstance(item, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 0 else None


def _rejection(
    error: ValidationError, prefix: tuple[int | str, ...], *, seq: int | None
) -> Rejection:
    """A Rejection naming the first invalid field of one item and describing every problem."""
    first = error.errors(include_url=False)[0]
    return Rejection(
        seq=seq,
        field=format_location((*prefix, *first["loc"])),
        reason=describe_validation_error(error, prefix),
    )


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
