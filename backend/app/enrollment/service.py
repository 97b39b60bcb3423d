"""Enrolment tokens: issuing, listing, revoking and the one-step exchange used by agents."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.audit import service as audit
from app.core.db import utcnow
from app.core.errors import NotAuthenticatedError, NotFoundError
from app.core.security import hash_token, new_token
from app.enrollment.models import EnrollmentToken
from app.users.models import User

ENROLLMENT_TOKEN_PREFIX = "nfe_"  # noqa: S105 - a prefix, not a secret
AGENT_PACKAGE = "nginx-fleet-agent"


class EnrollmentTokenRejectedError(NotAuthenticatedError):
    """The enrolment token is unknown, expired, revoked or used up (the detail says which)."""


@dataclass(frozen=True)
class IssuedToken:
    """A new token row and its raw secret, which is never stored."""

    row: EnrollmentToken
    token: str


def issue_token(
    *,
    session: Session,
    actor: User | str | None,
    labels: dict[str, str],
    expires_in_hours: int,
    max_uses: int,
) -> IssuedToken:
    """Create an enrolment token; its secret exists only in the returned value."""
    token = new_token(ENROLLMENT_TOKEN_PREFIX)
    now = utcnow()
    row = EnrollmentToken(
        token_hash=hash_token(token),
        labels=dict(labels),
        created_by=actor.id if isinstance(actor, User) else None,
        created_at=now,
        expires_at=now + timedelta(hours=expires_in_hours),
        max_uses=max_uses,
        uses=0,
    )
    session.add(row)
    session.flush()
    audit.record(
        session=session,
        actor=actor,
        action="enrollment_token.create",
        target=f"enrollment_token:{row.id}",
        detail={"labels": row.labels, "max_uses": max_uses, "expires_in_hours": expires_in_hours},
    )
    session.commit()
    return IssuedToken(row=row, token=token)


def list_tokens(*, session: Session) -> Sequence[EnrollmentToken]:
    """Every token, newest first."""
    return session.scalars(select(EnrollmentToken).order_by(EnrollmentToken.id.desc())).all()


def revoke_token(*, session: Session, actor: User, token_id: int) -> EnrollmentToken:
    """Revoke a token so that no further agent can use it (idempotent)."""
    row = session.get(EnrollmentToken, token_id)
    if row is None:
        raise NotFoundError(f"enrolment token {token_id} not found")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        audit.record(
            session=session,
            actor=actor,
            action="enrollment_token.revoke",
            target=f"enrollment_token:{row.id}",
        )
        session.commit()
    return row


def consume_enrollment_token(*, session: Session, token: str) -> EnrollmentToken:
    """Count one use of a valid token; the caller commits together with the enrolled host."""
    # The row lock makes concurrent enrolments with the last remaining use queue up.
    row = session.scalar(
        select(EnrollmentToken)
        .where(EnrollmentToken.token_hash == hash_token(token))
        .with_for_update()
    )
    if row is None:
        raise EnrollmentTokenRejectedError("unknown enrolment token")
    if row.revoked_at is not None:
        raise EnrollmentTokenRejectedError("enrolment token was revoked")
    if row.expires_at <= utcnow():
        raise EnrollmentTokenRejectedError("enrolment token has expired")
    if row.uses >= row.max_uses:
        raise EnrollmentTokenRejectedError("enrolment token has been used up")
    row.uses += 1
    session.flush()
    return row


def install_command() -> str:
    """The command that installs the agent on an nginx host."""
    return f"pip install {AGENT_PACKAGE}"


def enroll_command(*, server_url: str, token: str) -> str:
    """The command that enrols an agent with this server."""
    server = server_url.rstrip("/")
    return f"{AGENT_PACKAGE} enroll --server {shlex.quote(server)} --token {shlex.quote(token)}"
