"""Enrolment tokens that agents exchange for a host token."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.core.db import Base, JSONType, utcnow


class EnrollmentToken(Base):
    """A token an admin hands to agents; stored as its SHA-256, usable max_uses times."""

    __tablename__ = "enrollment_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    labels: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    max_uses: Mapped[int] = mapped_column(default=1)
    uses: Mapped[int] = mapped_column(default=0)
    revoked_at: Mapped[datetime | None]

    @property
    def revoked(self) -> bool:
        """True once an admin revoked the token."""
        return self.revoked_at is not None
