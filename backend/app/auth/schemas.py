"""API shapes of sign-in."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from app.core.types import Text


class LoginRequest(BaseModel):
    """Credentials typed into the sign-in form."""

    username: Annotated[Text, Field(min_length=1, max_length=64)]
    password: Annotated[Text, Field(min_length=1, max_length=1024)]
