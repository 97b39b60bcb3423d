"""Which silence, if any, mutes a (rule, host) pair."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.alerts.models import Silence

# The pseudo-label a matcher uses for the hostname.
HOST_LABEL = "host"


def host_labels(hostname: str, labels: Mapping[str, str]) -> dict[str, str]:
    """A host's labels plus `host` (its hostname), as matchers and notifications see them."""
    return {**labels, HOST_LABEL: hostname}


def matchers_match(matchers: Iterable[Mapping[str, str]], labels: Mapping[str, str]) -> bool:
    """Whether every matcher holds: `=` needs the label equal, `!=` needs it absent or other."""
    for matcher in matchers:
        value = labels.get(matcher["label"])
        if matcher["op"] == "=" and value != matcher["value"]:
            return False
        if matcher["op"] == "!=" and value == matcher["value"]:
            return False
    return True


def scope_matches(scope: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Whether a host is in a rule's scope: every scope label equal (empty: every host)."""
    return all(labels.get(name) == value for name, value in scope.items())


def active_silences(session: Session, now: datetime) -> list[Silence]:
    """Silences in force now."""
    return list(
        session.scalars(
            select(Silence)
            .where(Silence.starts_at <= now, Silence.ends_at > now)
            .order_by(Silence.id)
        )
    )


def silence_for(
    silences: Sequence[Silence], *, rule_id: int, labels: Mapping[str, str]
) -> Silence | None:
    """The first active silence that mutes this rule on a host with these labels."""
    for silence in silences:
        if silence.rule_id is not None and silence.rule_id != rule_id:
            continue
        if matchers_match(silence.matchers, labels):
            return silence
    return None
