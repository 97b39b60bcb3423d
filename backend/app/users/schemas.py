"""API shapes of users."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.core.config import MIN_PASSWORD_LENGTH
from app.core.types import Text
from app.users.models import Role

Username = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=64, pattern=r"^[\w.@-]+$"),
]
Password = Annotated[Text, Field(min_length=MIN_PASSWORD_LENGTH, max_length=1024)]


class UserRead(BaseModel):
    """A user as the UI sees it (never the password hash)."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    username: str
    role: Role
    created_at: datetime
    disabled: bool


class UserCreate(BaseModel):
    """A new user."""

    username: Username
    password: Password
    role: Role = Role.viewer


class UserUpdate(BaseModel):
    """Changes to a user; absent fields stay as they are."""

    role: Role | None = None
    password: Password | None = None
    disabled: bool | None = None
