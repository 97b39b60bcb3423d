"""User accounts and their roles."""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import Enum, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, utcnow


class Role(enum.StrEnum):
    """What a user may do; each role includes the ones below it."""

    viewer = "viewer"
    operator = "operator"
    admin = "admin"

    @property
    def rank(self) -> int:
        """Position in viewer < operator < admin."""
        return list(Role).index(self)

    def allows(self, required: Role) -> bool:
        """True when this role is at least the required one."""
        return self.rank >= required.rank


class User(Base):
    """A local account that signs in to the UI."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[Role] = mapped_column(
        Enum(Role, native_enum=False, length=16, validate_strings=True)
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    disabled: Mapped[bool] = mapped_column(default=False)
