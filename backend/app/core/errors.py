"""Error replies: readable 422s, service errors, and 503/409 for database outages and races."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DisconnectionError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm.exc import StaleDataError

log = logging.getLogger(__name__)

# How long a client should wait before retrying while the database is unreachable.
DATABASE_RETRY_AFTER_S = 5
# Failures that mean the database cannot be reached or is overloaded, not that the request is
# wrong: connection refused or lost, the pool exhausted, a server shutting down.
DATABASE_UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (
    OperationalError,
    PoolTimeoutError,
    DisconnectionError,
)

# The body is what is usually invalid, so its fields are named without a "body." prefix.
_IMPLIED_LOCATIONS = frozenset({"body"})


def field_path(loc: Sequence[int | str]) -> str:
    """Render a pydantic location like ("body", "samples", 2, "ts") as "samples[2].ts"."""
    parts = list(loc)
    if len(parts) > 1 and parts[0] in _IMPLIED_LOCATIONS:
        parts = parts[1:]
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "request"


def describe_errors(errors: Sequence[Any]) -> list[str]:
    """One "field: message" sentence per validation error."""
    messages = []
    for error in errors:
        message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
        messages.append(f"{field_path(error.get('loc', ()))}: {message}")
    return messages


def _without_input(error: Any) -> Any:
    """A validation error without the value that was refused.

    The value may be a password, and it may be what cannot be written back (a lone surrogate,
    NaN): the field's name and the reason are what the client needs."""
    return {key: value for key, value in dict(error).items() if key not in {"input", "url"}}


async def validation_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """422 with a human-readable detail string and the structured errors kept under "errors"."""
    assert isinstance(exc, RequestValidationError)
    errors = [_without_input(error) for error in exc.errors()]
    body = {"detail": "; ".join(describe_errors(errors)), "errors": jsonable_encoder(errors)}
    return AsciiJSONResponse(body, status_code=422)


class AsciiJSONResponse(JSONResponse):
    """JSON with non-ASCII escaped: a field name that is a lone surrogate still renders."""

    def render(self, content: Any) -> bytes:
        """Serialise like JSONResponse, but ASCII only (\\u escapes), refusing NaN."""
        return json.dumps(
            content, ensure_ascii=True, allow_nan=False, separators=(",", ":")
        ).encode("ascii")


class ServiceError(Exception):
    """A request the service refuses, with the HTTP status and a reason an operator understands."""

    status_code = 400

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFoundError(ServiceError):
    """The object does not exist."""

    status_code = 404


class ConflictError(ServiceError):
    """The change contradicts the current state (duplicate name, last admin, ...)."""

    status_code = 409


class InvalidInputError(ServiceError):
    """A value passed the schema but breaks a rule of the domain."""

    status_code = 422


class NotAuthenticatedError(ServiceError):
    """A credential (token, password) was missing, unknown or no longer valid."""

    status_code = 401


async def service_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """Reply {"detail": reason} with the status the service error carries."""
    assert isinstance(exc, ServiceError)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)


async def database_unavailable_handler(request: Request, exc: Exception) -> JSONResponse:
    """503 with Retry-After: the request may well succeed once the database is back."""
    log.error("database unavailable during %s %s: %s", request.method, request.url.path, exc)
    return JSONResponse(
        {"detail": "the database is unavailable; try again shortly"},
        status_code=503,
        headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
    )


async def stale_data_handler(request: Request, exc: Exception) -> JSONResponse:
    """409 for a row that another request changed or removed between our read and our write."""
    # Services lock what they change; reaching this means one was missed: log it as a bug.
    log.error("concurrent change during %s %s: %s", request.method, request.url.path, exc)
    return JSONResponse(
        {"detail": "another request changed this at the same time; reload and try again"},
        status_code=409,
    )


def add_error_handlers(app: FastAPI) -> None:
    """Register every handler above on the app."""
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.add_exception_handler(ServiceError, service_error_handler)
    for error in DATABASE_UNAVAILABLE_ERRORS:
        app.add_exception_handler(error, database_unavailable_handler)
    app.add_exception_handler(StaleDataError, stale_data_handler)
