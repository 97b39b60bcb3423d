"""Sign-in, sessions with sliding expiry, and the sign-in rate limit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any, TypeVar

from anyio import to_thread
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.audit import service as audit
from app.auth import attempts
from app.auth.cookies import SESSION_TOKEN_PREFIX
from app.auth.models import UserSession
from app.auth.password_checks import PasswordCheck, password_check_pool
from app.core.config import get_settings
from app.core.db import SessionLocal, utcnow
from app.core.security import hash_token, new_token
from app.users.models import User

T = TypeVar("T")

# Refreshing the sliding expiry on every request would write on every read; once a minute is plenty.
TOUCH_INTERVAL = timedelta(seconds=60)


class InvalidCredentialsError(Exception):
    """Unknown user, wrong password or disabled account (never said which)."""


class TooManyAttemptsError(Exception):
    """Too many failed sign-ins (for this username and address, this address, or overall)."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"too many failed sign-ins; retry after {retry_after_s} s")
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class NewSession:
    """A created session with the raw secrets that go into the cookies (shown only here)."""

    user: User
    session_id: str
    csrf_token: str
    max_age_s: int


def _session_ttl() -> timedelta:
    return timedelta(hours=get_settings().session_ttl_hours)


@dataclass(frozen=True)
class LoginCandidate:
    """A counted sign-in attempt that may now check its password."""

    address: str
    keys: attempts.AttemptKeys
    user_id: int | None
    password_hash: str | None


def begin_login(*, session: Session, username: str, address: str) -> LoginCandidate:
    """Count the attempt (TooManyAttemptsError beyond a limit) and look the user up; commits."""
    username = username.strip()
    keys = attempts.keys_of(username=username, address=address)
    verdict = attempts.count_attempt(session=session, keys=keys, now=utcnow())
    if not verdict.allowed:
        raise TooManyAttemptsError(verdict.retry_after_s)
    user = session.scalar(select(User).where(User.username == username))
    usable = user if user is not None and not user.disabled else None
    return LoginCandidate(
        address=address,
        keys=keys,
        user_id=usable.id if usable else None,
        password_hash=usable.password_hash if usable else None,
    )


def finish_login(
    *,
    session: Session,
    candidate: LoginCandidate,
    check: PasswordCheck,
    user_agent: str | None,
) -> NewSession:
    """Open a session after a passed check (InvalidCredentialsError otherwise); commits.

    A failed attempt stays counted: begin_login counted it before the check."""
    user = session.get(User, candidate.user_id) if candidate.user_id is not None else None
    if user is None or user.disabled or not check.valid:
        raise InvalidCredentialsError
    if check.new_hash is not None:
        user.password_hash = check.new_hash
    attempts.forgive(session=session, keys=candidate.keys)
    created = open_session(session=session, user=user, ip=candidate.address, user_agent=user_agent)
    audit.record(
        session=session,
        actor=user,
        action="auth.login",
        target=f"user:{user.id}",
        detail={"ip": candidate.address},
    )
    session.commit()
    return created


async def login(
    *, username: str, password: str, address: str, user_agent: str | None
) -> NewSession:
    """Sign in: count the attempt, check the password on its own pool, open a session.

    Database steps run on the request thread pool (short); the argon2 check never does, so a
    storm of sign-ins cannot delay pages or agent pushes (PasswordChecksBusyError when full)."""
    with password_check_pool().slot() as slot:
        candidate = await to_thread.run_sync(
            partial(_in_session, begin_login, username=username, address=address)
        )
        check = await slot.check(password, candidate.password_hash)
    return await to_thread.run_sync(
        partial(_in_session, finish_login, candidate=candidate, check=check, user_agent=user_agent)
    )


def _in_session(step: Callable[..., T], **kwargs: Any) -> T:
    """Run one step of the sign-in with a session of its own."""
    with SessionLocal() as session:
        return step(session=session, **kwargs)


def open_session(
    *, session: Session, user: User, ip: str | None, user_agent: str | None
) -> NewSession:
    """Add a new session for user to the transaction and return its raw secrets."""
    ttl = _session_ttl()
    raw_id = new_token(SESSION_TOKEN_PREFIX)
    csrf_token = new_token("")
    now = utcnow()
    session.add(
        UserSession(
            session_hash=hash_token(raw_id),
            user_id=user.id,
            csrf_token=csrf_token,
            created_at=now,
            last_seen_at=now,
            expires_at=now + ttl,
            ip=ip,
            user_agent=(user_agent or "")[:512] or None,
        )
    )
    return NewSession(
        user=user, session_id=raw_id, csrf_token=csrf_token, max_age_s=int(ttl.total_seconds())
    )


def find_live_session(*, session: Session, session_id: str) -> UserSession | None:
    """The live session for a cookie value, untouched; None if unknown, expired or disabled."""
    found = session.scalar(
        select(UserSession).where(UserSession.session_hash == hash_token(session_id))
    )
    if found is None or found.expires_at <= utcnow() or found.user.disabled:
        return None
    return found


def resolve_session(*, session: Session, session_id: str) -> UserSession | None:
    """The live session for a cookie value, its expiry slid forward; None if unknown or expired."""
    found = find_live_session(session=session, session_id=session_id)
    if found is None:
        return None
    now = utcnow()
    if now - found.last_seen_at >= TOUCH_INTERVAL:
        found.last_seen_at = now
        found.expires_at = now + _session_ttl()
        session.commit()
    return found


def logout(*, session: Session, user_session: UserSession) -> None:
    """End a session."""
    audit.record(
        session=session,
        actor=user_session.user,
        action="auth.logout",
        target=f"user:{user_session.user_id}",
    )
    session.delete(user_session)
    session.commit()


def end_sessions_of(*, session: Session, user_id: int) -> None:
    """Remove every session of a user (after a password change, role change or deletion)."""
    session.execute(delete(UserSession).where(UserSession.user_id == user_id))


def purge_expired_sessions(*, session: Session) -> int:
    """Delete expired sessions and stale sign-in failures; returns the sessions removed."""
    now = utcnow()
    removed = session.execute(delete(UserSession).where(UserSession.expires_at <= now))
    attempts.purge_expired(session=session, now=now)
    session.commit()
    return int(getattr(removed, "rowcount", 0) or 0)
