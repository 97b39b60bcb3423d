"""Sign-in, sessions with sliding expiry, and the sign-in rate limit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.audit import service as audit
from app.auth.cookies import SESSION_TOKEN_PREFIX
from app.auth.models import LoginFailure, UserSession
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.security import (
    hash_password,
    hash_token,
    new_token,
    password_needs_rehash,
    verify_password,
)
from app.users.models import User

MAX_FAILURES = 10
FAILURE_WINDOW = timedelta(minutes=5)
# Refreshing the sliding expiry on every request would write on every read; once a minute is plenty.
TOUCH_INTERVAL = timedelta(seconds=60)


class InvalidCredentialsError(Exception):
    """Unknown user, wrong password or disabled account (never said which)."""


class TooManyAttemptsError(Exception):
    """Too many failed sign-ins for this username from this address."""


@dataclass(frozen=True)
class NewSession:
    """A created session with the raw secrets that go into the cookies (shown only here)."""

    user: User
    session_id: str
    csrf_token: str
    max_age_s: int


def _session_ttl() -> timedelta:
    return timedelta(hours=get_settings().session_ttl_hours)


def _recent_failures(*, session: Session, username: str, ip: str) -> int:
    since = utcnow() - FAILURE_WINDOW
    query = select(func.count(LoginFailure.id)).where(
        LoginFailure.username == username, LoginFailure.ip == ip, LoginFailure.at >= since
    )
    return session.scalar(query) or 0


def login(
    *, session: Session, username: str, password: str, ip: str, user_agent: str | None
) -> NewSession:
    """Check the credentials, then open a session; failures are counted per username and IP."""
    username = username.strip()
    if _recent_failures(session=session, username=username, ip=ip) >= MAX_FAILURES:
        raise TooManyAttemptsError
    user = session.scalar(select(User).where(User.username == username))
    valid = verify_password(password, user.password_hash if user else None)
    if user is None or not valid or user.disabled:
        session.add(LoginFailure(username=username, ip=ip))
        session.commit()
        raise InvalidCredentialsError
    if password_needs_rehash(user.password_hash):
        user.password_hash = hash_password(password)
    session.execute(
        delete(LoginFailure).where(LoginFailure.username == username, LoginFailure.ip == ip)
    )
    created = open_session(session=session, user=user, ip=ip, user_agent=user_agent)
    audit.record(
        session=session,
        actor=user,
        action="auth.login",
        target=f"user:{user.id}",
        detail={"ip": ip},
    )
    session.commit()
    return created


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


def resolve_session(*, session: Session, session_id: str) -> UserSession | None:
    """The live session for a cookie value, its expiry slid forward; None if unknown or expired."""
    found = session.scalar(
        select(UserSession).where(UserSession.session_hash == hash_token(session_id))
    )
    now = utcnow()
    if found is None or found.expires_at <= now or found.user.disabled:
        return None
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
    session.execute(delete(LoginFailure).where(LoginFailure.at < now - FAILURE_WINDOW))
    session.commit()
    return int(getattr(removed, "rowcount", 0) or 0)
