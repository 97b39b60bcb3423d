"""Why a push or ping is refused as a whole; the router turns these into HTTP errors."""

from __future__ import annotations

from app.core.errors import InvalidInputError, NotAuthenticatedError, ServiceError

UNKNOWN_TOKEN = "unknown or revoked host token; enrol the agent again"  # noqa: S105
MISSING_TOKEN = "missing host token (Authorization: Bearer nfh_…)"  # noqa: S105


class HostTokenError(NotAuthenticatedError):
    """The bearer token is missing, unknown or revoked (401 with WWW-Authenticate: Bearer)."""


class AgentMismatchError(ServiceError):
    """The push names another agent than the one the token was issued to."""

    status_code = 403


class PayloadRejected(ServiceError):
    """The push body as a whole cannot be accepted (413 or 422); nothing of it is stored."""


class PayloadTooLargeError(PayloadRejected):
    """The body, raw or decompressed, is above INGEST_MAX_BYTES."""

    status_code = 413


class MalformedPayloadError(PayloadRejected, InvalidInputError):
    """The envelope is unusable: not gzip/JSON, or a top-level field of the wrong type."""

    status_code = 422
