"""Browser sessions and failed sign-in attempts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.db import Base, utcnow
from app.users.models import User


class UserSession(Base):
    """A signed-in browser; the cookie holds the raw id, the table only its SHA-256."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    session_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(index=True)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    ip: Mapped[str | None] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(512))

    user: Mapped[User] = relationship(lazy="joined")


class LoginAttempts(Base):
    """Sign-in attempts of one key (username+address, address, or all) in its current window.

    Kept in the database so that every API replica counts together; one upsert statement
    counts and reads, so parallel attempts can never all see the same count."""

    __tablename__ = "login_attempts"

    # SHA-256 of the key: usernames and addresses of any length fit one bounded column.
    key_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(index=True)
    attempts: Mapped[int]
