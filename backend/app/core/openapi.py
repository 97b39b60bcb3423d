"""The error replies of every operation in the OpenAPI document, derived from each route.

The UI client is generated from the document, so it must list the errors the API really
answers, with the bodies it really sends: {"detail": str} for every error, plus "errors" (the
structured list) on a 422 from request validation. Which statuses an operation can answer is
derived from the route: its dependencies (those marked with `raises`), its security scheme,
its parameters and its method; statuses only a service knows are declared on the route with
`responses=`. Every declared error gets the shared error body.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.security.base import SecurityBase
from pydantic import BaseModel, ConfigDict, Field

from app.core.db import get_session

Call = TypeVar("Call", bound=Callable[..., Any])

_RAISES_ATTRIBUTE = "__nginx_fleet_raises__"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

ERROR_DESCRIPTIONS = {
    400: "The body could not be read as JSON (for example, it is not UTF-8)",
    401: "Not signed in, the session expired, or the credential is unknown",
    403: "The role is too low, or the CSRF token is missing or wrong",
    404: "The object does not exist",
    409: "The change conflicts with the current state or with a concurrent change",
    413: "The request body is larger than the limit",
    422: "The request is invalid; detail names each invalid field",
    429: "Too many attempts; wait for Retry-After seconds",
    503: "The database is unavailable; retry after Retry-After seconds",
}


class ErrorBody(BaseModel):
    """Every error reply: what was wrong, in words an operator understands."""

    detail: str


class ValidationErrorItem(BaseModel):
    """One invalid field as pydantic reports it."""

    model_config = ConfigDict(extra="allow")

    type: str
    loc: list[str | int]
    msg: str


class ValidationErrorBody(BaseModel):
    """A 422: one sentence per invalid field; the structured list when the schema refused it."""

    detail: str
    errors: list[ValidationErrorItem] = Field(
        default_factory=list,
        description="present when the request failed the schema, absent for a domain rule",
    )


def raises(*statuses: int) -> Callable[[Call], Call]:
    """Mark a dependency with the error statuses it can answer, for the OpenAPI document."""

    def mark(call: Call) -> Call:
        setattr(call, _RAISES_ATTRIBUTE, frozenset(statuses))
        return call

    return mark


def _dependants(dependant: Dependant) -> Iterator[Dependant]:
    """dependant and every dependency under it, depth first."""
    yield dependant
    for sub in dependant.dependencies:
        yield from _dependants(sub)


def error_statuses(route: APIRoute) -> set[int]:
    """The error statuses the route can answer besides those declared on it."""
    dependants = list(_dependants(route.dependant))
    calls = [d.call for d in dependants[1:] if d.call is not None]
    statuses: set[int] = {503}  # any route can meet a database outage
    for call in calls:
        statuses |= getattr(call, _RAISES_ATTRIBUTE, frozenset())
    if any(isinstance(call, SecurityBase) for call in calls):
        statuses.add(401)
    if any(d.path_params for d in dependants):
        statuses |= {404, 422}
    if any(
        d.query_params or d.header_params or d.cookie_params or d.body_params for d in dependants
    ):
        statuses.add(422)
    if any(d.body_params for d in dependants):
        statuses.add(400)  # FastAPI's answer to a body it cannot decode
        statuses.add(413)  # app.api.middleware.RequestBodyMiddleware bounds every body
    # A write can lose a race with another one (answered 409, see app.core.errors).
    if get_session in calls and set(route.methods or ()) & UNSAFE_METHODS:
        statuses.add(409)
    return statuses


def _error_response(status: int, existing: dict[str, Any]) -> dict[str, Any]:
    """The documented response of an error status: its description and the shared body."""
    model = "ValidationErrorBody" if status == 422 else "ErrorBody"
    content = existing.get("content", {}).get("application/json", {})
    schema = content.get("schema", {})
    # A route may document its own error body (health's 503); FastAPI's 422 is replaced.
    keep = bool(schema) and status != 422
    return {
        **existing,
        "description": existing.get("description") or ERROR_DESCRIPTIONS.get(status, "Error"),
        "content": {
            "application/json": {
                **content,
                "schema": schema if keep else {"$ref": f"#/components/schemas/{model}"},
            }
        },
    }


def _add_components(schema: dict[str, Any], body_models: Sequence[type[BaseModel]]) -> None:
    """Put the error bodies and the extra body models (with what they refer to) into components;
    drop FastAPI's 422 shapes, which never occur."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    models: tuple[type[BaseModel], ...] = (
        ErrorBody,
        ValidationErrorItem,
        ValidationErrorBody,
        *body_models,
    )
    for model in models:
        definition = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, referred in definition.pop("$defs", {}).items():
            # Two different models of one name would make one of them describe the other.
            if components.setdefault(name, referred) != referred:
                raise RuntimeError(f"two different schemas are named {name} in the document")
        components[model.__name__] = definition
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)


def add_error_responses(
    schema: dict[str, Any], routes: list[Any], body_models: Sequence[type[BaseModel]] = ()
) -> dict[str, Any]:
    """Document on each operation every error status it can answer, with the error bodies."""
    _add_components(schema, body_models)
    # Routers included with a prefix are wrapped; their contexts carry the full path.
    for context in iter_route_contexts(routes):
        route = context.original_route
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        operations = schema["paths"].get(context.path_format or route.path_format, {})
        for method in route.methods or ():
            operation = operations.get(method.lower())
            if operation is None:
                continue
            responses: dict[str, Any] = operation.setdefault("responses", {})
            declared = {int(code) for code in responses if code.isdigit() and int(code) >= 400}
            statuses = error_statuses(route) | declared
            for status in sorted(statuses):
                responses[str(status)] = _error_response(status, responses.get(str(status), {}))
    return schema


def document_errors(app: FastAPI, body_models: Sequence[type[BaseModel]] = ()) -> None:
    """Make app.openapi() include the error replies of every operation.

    body_models: request bodies that routes read themselves (streamed, size-limited) and
    refer to by `#/components/schemas/<name>` in their openapi_extra."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = add_error_responses(build(), app.routes, body_models)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
