"""Readable 422 replies: one sentence per invalid field, plus the structured list."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

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


async def validation_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """422 with a human-readable detail string and the structured errors kept under "errors"."""
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    body = {"detail": "; ".join(describe_errors(errors)), "errors": jsonable_encoder(errors)}
    return JSONResponse(body, status_code=422)


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
