"""The channel kinds: the settings each one takes and the secrets it keeps encrypted."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.core.types import Text


class ChannelKind(enum.StrEnum):
    """Where a channel sends notifications."""

    webhook = "webhook"
    slack = "slack"
    email = "email"


MAX_URL_LENGTH = 2048
MAX_RECIPIENTS = 50
# Deliberately plain: an address is what SMTP's RCPT TO takes, no display names or comments.
_ADDRESS = re.compile(r"^[^@\s<>,;:\"()\[\]\\]+@[A-Za-z0-9.\-\[\]:]+$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9.\-:\[\]]+$")


def check_http_url(value: str) -> str:
    """An absolute http:// or https:// URL with a host; anything else cannot be POSTed to."""
    if any(ch.isspace() or ord(ch) < 32 for ch in value):
        raise ValueError("must not contain spaces or control characters")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as error:
        raise ValueError(f"is not a valid URL ({error})") from None
    if parts.scheme not in {"http", "https"}:
        raise ValueError("must be an http:// or https:// URL")
    if not parts.hostname:
        raise ValueError("must name a host (https://host/path)")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "must not hold a user name or password (a webhook's credential is its bearer_token)"
        )
    if port == 0:
        raise ValueError("port must be between 1 and 65535")
    return value


def check_address(value: str) -> str:
    """A plain email address (name@example.org)."""
    if len(value) > 254 or not _ADDRESS.match(value):
        raise ValueError("must be a plain email address like alerts@example.org")
    return value


HttpUrl = Annotated[
    Text, StringConstraints(min_length=1, max_length=MAX_URL_LENGTH), AfterValidator(check_http_url)
]
Address = Annotated[Text, AfterValidator(check_address)]


class WebhookSettings(BaseModel):
    """Settings of a webhook channel."""

    model_config = ConfigDict(extra="forbid")

    url: HttpUrl


class SlackSettings(BaseModel):
    """Settings of a Slack channel: none, the webhook URL is a secret."""

    model_config = ConfigDict(extra="forbid")


SmtpSecurity = Literal["starttls", "tls", "none"]
DEFAULT_SMTP_PORTS: dict[str, int] = {"starttls": 587, "tls": 465, "none": 25}


class EmailSettings(BaseModel):
    """Settings of an email channel (an SMTP server and the addresses)."""

    model_config = ConfigDict(extra="forbid")

    host: Annotated[Text, StringConstraints(min_length=1, max_length=253, pattern=_HOSTNAME)]
    port: int | None = Field(default=None, ge=1, le=65535, description="null: by security")
    security: SmtpSecurity = "starttls"
    username: Annotated[Text, StringConstraints(min_length=1, max_length=254)] | None = None
    from_addr: Address
    to_addrs: list[Address] = Field(min_length=1, max_length=MAX_RECIPIENTS)

    @property
    def effective_port(self) -> int:
        """The port, or the usual one of the security mode."""
        return self.port or DEFAULT_SMTP_PORTS[self.security]


@dataclass(frozen=True)
class KindSpec:
    """What a channel kind takes: its settings model and its secrets."""

    settings: type[BaseModel]
    secrets: frozenset[str]
    required_secrets: frozenset[str]
    # A secret's value checker: raises ValueError with the reason.
    secret_checks: dict[str, Callable[[str], str]]


KINDS: dict[ChannelKind, KindSpec] = {
    ChannelKind.webhook: KindSpec(
        settings=WebhookSettings,
        secrets=frozenset({"bearer_token"}),
        required_secrets=frozenset(),
        secret_checks={},
    ),
    ChannelKind.slack: KindSpec(
        settings=SlackSettings,
        secrets=frozenset({"webhook_url"}),
        required_secrets=frozenset({"webhook_url"}),
        secret_checks={"webhook_url": check_http_url},
    ),
    ChannelKind.email: KindSpec(
        settings=EmailSettings,
        secrets=frozenset({"password"}),
        required_secrets=frozenset(),
        secret_checks={},
    ),
}
