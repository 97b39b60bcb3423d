"""Channels (create, edit, delete, test) and deliveries (enqueue, dispatch, list)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from secrets import token_hex
from typing import Any, cast

from pydantic import ValidationError
from sqlalchemy import ColumnElement, exists, func, literal, select, type_coerce
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from app.audit import service as audit
from app.core.config import get_settings
from app.core.db import utcnow
from app.core.errors import ConflictError, InvalidInputError, NotFoundError, field_path
from app.notify import tasks
from app.notify.delivery import attempt_delivery
from app.notify.kinds import KINDS, ChannelKind
from app.notify.models import AlertChannel, AlertDelivery, DeliveryStatus
from app.notify.notification import AlertItem, Notification, NotificationEvent
from app.notify.schemas import ChannelRead, ChannelWrite, DeliveryAttemptRead, DeliveryRead
from app.notify.secrets import SecretsUnreadableError, decrypt_secrets, encrypt_secrets
from app.users.models import User

# A test from the UI waits for the receiver this long, within the request.
TEST_TIMEOUT_S = 5.0
TEST_RULE_KEY = "test"
DEFAULT_DELIVERY_LIMIT = 50
MAX_DELIVERY_LIMIT = 500


def channel_read(channel: AlertChannel) -> ChannelRead:
    """The API view of a channel: settings, and the names (never values) of its secrets."""
    return ChannelRead(
        id=channel.id,
        name=channel.name,
        kind=channel.kind,
        enabled=channel.enabled,
        settings=dict(channel.settings),
        secrets_set=sorted(channel.secret_names),
    )


def list_channels(*, session: Session) -> Sequence[AlertChannel]:
    """Every channel by name."""
    return session.scalars(select(AlertChannel).order_by(AlertChannel.name, AlertChannel.id)).all()


def channel_names(*, session: Session) -> dict[int, str]:
    """Every channel's name by id (rules refer to channels by id, rules files by name)."""
    rows = session.execute(select(AlertChannel.id, AlertChannel.name).order_by(AlertChannel.id))
    return {channel_id: name for channel_id, name in rows}


def get_channel(*, session: Session, channel_id: int) -> AlertChannel:
    """One channel; 404 when it does not exist."""
    channel = session.get(AlertChannel, channel_id)
    if channel is None:
        raise NotFoundError(f"alert channel {channel_id} does not exist")
    return channel


def checked_settings(kind: ChannelKind, settings: dict[str, Any]) -> dict[str, Any]:
    """The settings of a channel of this kind, normalised; 422 naming each invalid field."""
    try:
        parsed = KINDS[kind].settings.model_validate(settings)
    except ValidationError as error:
        reasons = []
        for item in error.errors():
            where = field_path(("settings", *item["loc"]))
            reasons.append(f"{where}: {item['msg'].removeprefix('Value error, ')}")
        raise InvalidInputError(f"{'; '.join(reasons)} ({kind.value} channel)") from None
    return parsed.model_dump(mode="json")


def merged_secrets(
    kind: ChannelKind, current: dict[str, str], given: dict[str, str]
) -> dict[str, str]:
    """current updated by given (an empty value clears one); 422 naming a wrong secret."""
    spec = KINDS[kind]
    allowed = ", ".join(sorted(spec.secrets)) or "none"
    merged = {name: value for name, value in current.items() if name in spec.secrets}
    for name, value in given.items():
        if name not in spec.secrets:
            raise InvalidInputError(
                f"secrets.{name}: {kind.value} channels have no such secret (they take: {allowed})"
            )
        if value == "":
            merged.pop(name, None)
            continue
        check = spec.secret_checks.get(name)
        if check is not None:
            try:
                check(value)
            except ValueError as error:
                raise InvalidInputError(f"secrets.{name}: {error}") from None
        merged[name] = value
    for name in sorted(spec.required_secrets - merged.keys()):
        raise InvalidInputError(f"secrets.{name}: required for {kind.value} channels")
    return merged


def _refuse_duplicate_name(session: Session, name: str, channel_id: int | None) -> None:
    """409 when another channel has this name."""
    query = select(AlertChannel.id).where(AlertChannel.name == name)
    if channel_id is not None:
        query = query.where(AlertChannel.id != channel_id)
    if session.scalar(query) is not None:
        raise ConflictError(f"name: a channel named {name!r} already exists")


def _store(session: Session, channel: AlertChannel) -> None:
    """Flush the channel; a name taken meanwhile by a concurrent request is a 409."""
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raise ConflictError(f"name: a channel named {channel.name!r} already exists") from None


def _apply(channel: AlertChannel, body: ChannelWrite, current_secrets: dict[str, str]) -> None:
    """Set the channel's fields from a checked body."""
    settings = checked_settings(body.kind, body.settings)
    values = merged_secrets(body.kind, current_secrets, body.secrets)
    channel.name = body.name
    channel.kind = body.kind
    channel.enabled = body.enabled
    channel.settings = settings
    channel.secrets_encrypted = encrypt_secrets(values)
    channel.secret_names = sorted(values)


def _audit_detail(channel: AlertChannel) -> dict[str, Any]:
    """What the audit log keeps of a channel: no secret value, only which are set."""
    return {
        "name": channel.name,
        "kind": channel.kind.value,
        "enabled": channel.enabled,
        "settings": dict(channel.settings),
        "secrets_set": sorted(channel.secret_names),
    }


def create_channel(*, session: Session, body: ChannelWrite, actor: User) -> AlertChannel:
    """Create a channel; audited; commits."""
    _refuse_duplicate_name(session, body.name, None)
    channel = AlertChannel()
    _apply(channel, body, {})
    session.add(channel)
    _store(session, channel)
    audit.record(
        session=session,
        actor=actor,
        action="alert_channel.create",
        target=f"alert_channel:{channel.id}",
        detail=_audit_detail(channel),
    )
    session.commit()
    return channel


def update_channel(
    *, session: Session, channel_id: int, body: ChannelWrite, actor: User
) -> AlertChannel:
    """Replace a channel's name, kind, settings; secrets omitted keep their value; commits."""
    channel = session.scalar(
        select(AlertChannel).where(AlertChannel.id == channel_id).with_for_update()
    )
    if channel is None:
        raise NotFoundError(f"alert channel {channel_id} does not exist")
    _refuse_duplicate_name(session, body.name, channel_id)
    try:
        current = decrypt_secrets(channel.secrets_encrypted)
    except SecretsUnreadableError:
        # Unreadable with the current key: the body must supply what the kind requires.
        current = {}
    _apply(channel, body, current)
    channel.updated_at = utcnow()
    _store(session, channel)
    audit.record(
        session=session,
        actor=actor,
        action="alert_channel.update",
        target=f"alert_channel:{channel.id}",
        detail=_audit_detail(channel),
    )
    session.commit()
    return channel


def delete_channel(*, session: Session, channel_id: int, actor: User) -> None:
    """Delete a channel and its deliveries; audited; commits."""
    channel = session.scalar(
        select(AlertChannel).where(AlertChannel.id == channel_id).with_for_update()
    )
    if channel is None:
        raise NotFoundError(f"alert channel {channel_id} does not exist")
    audit.record(
        session=session,
        actor=actor,
        action="alert_channel.delete",
        target=f"alert_channel:{channel_id}",
        detail={"name": channel.name, "kind": channel.kind.value},
    )
    session.delete(channel)
    session.commit()


def enqueue(
    *,
    session: Session,
    channel_ids: Iterable[int],
    notification: Notification,
    incident_ids: Sequence[int] | None = None,
) -> list[int]:
    """Pending deliveries of a notification to each enabled channel, in the caller's
    transaction (not committed); missing and disabled channels are skipped. Call dispatch()
    with the returned ids after the commit. incident_ids: by default the alerts' incident_id."""
    wanted = sorted(set(channel_ids))
    if not wanted:
        return []
    enabled = session.scalars(
        select(AlertChannel.id)
        .where(AlertChannel.id.in_(wanted), AlertChannel.enabled.is_(True))
        .order_by(AlertChannel.id)
    ).all()
    now = utcnow()
    payload = notification.to_json()
    deliveries = [
        AlertDelivery(
            channel_id=channel_id,
            event=notification.event,
            rule_key=notification.rule_key,
            incident_ids=list(
                dict.fromkeys(
                    incident_ids if incident_ids is not None else notification.incident_ids
                )
            ),
            payload=payload,
            status=DeliveryStatus.pending,
            created_at=now,
            next_attempt_at=now,
            attempt_count=0,
        )
        for channel_id in enabled
    ]
    session.add_all(deliveries)
    session.flush()
    return [delivery.id for delivery in deliveries]


def dispatch(delivery_ids: Iterable[int]) -> int:
    """After the commit of enqueue(): one task per delivery; returns how many were queued."""
    return tasks.dispatch(delivery_ids)


def test_notification(*, channel: AlertChannel, external_url: str) -> Notification:
    """A firing notification with one made-up alert, saying it is a test of this channel."""
    base = external_url.rstrip("/")
    now = utcnow()
    alert = AlertItem(
        status="firing",
        rule_key=TEST_RULE_KEY,
        rule_name="Test notification",
        severity="info",
        host_id=0,
        hostname="nginx-fleet",
        labels={},
        summary=f"A test of the alert channel {channel.name!r}: if you read this, it works.",
        description="Sent from the channel's settings page; no rule fired.",
        cause_code=None,
        cause_text=None,
        value=None,
        unit="",
        started_at=now,
        ended_at=None,
        url=f"{base}/alerts",
        finding_url=None,
        fingerprint=token_hex(8),
    )
    return Notification(
        event="test",
        rule_key=TEST_RULE_KEY,
        rule_name="Test notification",
        alerts=[alert],
        external_url=base,
    )


def send_test(
    *,
    session: Session,
    channel_id: int,
    actor: User | None = None,
    external_url: str | None = None,
) -> AlertDelivery:
    """Send a test notification at once (disabled channels too), without retries; commits."""
    channel = get_channel(session=session, channel_id=channel_id)
    base = external_url or get_settings().public_url or "http://localhost"
    now = utcnow()
    delivery = AlertDelivery(
        channel_id=channel.id,
        event="test",
        rule_key=TEST_RULE_KEY,
        incident_ids=[],
        payload=test_notification(channel=channel, external_url=base).to_json(),
        status=DeliveryStatus.pending,
        created_at=now,
        next_attempt_at=now,
        attempt_count=0,
    )
    session.add(delivery)
    session.flush()
    audit.record(
        session=session,
        actor=actor,
        action="alert_channel.test",
        target=f"alert_channel:{channel.id}",
        detail={"name": channel.name, "delivery_id": delivery.id},
    )
    session.commit()
    attempt_delivery(
        session=session,
        delivery_id=delivery.id,
        timeout_s=TEST_TIMEOUT_S,
        retry=False,
        send_when_disabled=True,
    )
    session.expire_all()
    return get_delivery(session=session, delivery_id=delivery.id)


def get_delivery(*, session: Session, delivery_id: int) -> AlertDelivery:
    """One delivery with its channel and attempts; 404 when it does not exist."""
    delivery = session.scalar(
        select(AlertDelivery)
        .where(AlertDelivery.id == delivery_id)
        .options(selectinload(AlertDelivery.channel), selectinload(AlertDelivery.attempts))
    )
    if delivery is None:
        raise NotFoundError(f"alert delivery {delivery_id} does not exist")
    return delivery


def channel_deliveries(
    *, session: Session, channel_id: int, limit: int = DEFAULT_DELIVERY_LIMIT
) -> Sequence[AlertDelivery]:
    """A channel's deliveries, newest first; 404 when the channel does not exist."""
    get_channel(session=session, channel_id=channel_id)
    return session.scalars(
        select(AlertDelivery)
        .where(AlertDelivery.channel_id == channel_id)
        .options(selectinload(AlertDelivery.channel), selectinload(AlertDelivery.attempts))
        .order_by(AlertDelivery.id.desc())
        .limit(min(limit, MAX_DELIVERY_LIMIT))
    ).all()


def _carries_incident(session: Session, incident_id: int) -> ColumnElement[bool]:
    """SQL: the delivery's incident_ids holds incident_id (JSONB containment, or json_each)."""
    if session.get_bind().dialect.name == "postgresql":
        return type_coerce(AlertDelivery.incident_ids, JSONB).contains([incident_id])
    listed = func.json_each(AlertDelivery.incident_ids).table_valued("value")
    return exists(select(literal(1)).select_from(listed).where(listed.c.value == incident_id))


def deliveries_for_incident(
    *,
    session: Session,
    incident_id: int,
    rule_key: str | None = None,
    since: datetime | None = None,
    limit: int = DEFAULT_DELIVERY_LIMIT,
) -> list[DeliveryRead]:
    """The deliveries that carried an incident, newest first, as the API shows them.

    rule_key and since (the incident's rule and start) let the index on (rule_key,
    created_at) narrow the rows read."""
    query = (
        select(AlertDelivery)
        .where(_carries_incident(session, incident_id))
        .options(selectinload(AlertDelivery.channel), selectinload(AlertDelivery.attempts))
        .order_by(AlertDelivery.id.desc())
        .limit(min(limit, MAX_DELIVERY_LIMIT))
    )
    if rule_key is not None:
        query = query.where(AlertDelivery.rule_key == rule_key)
    if since is not None:
        query = query.where(AlertDelivery.created_at >= since)
    return [delivery_read(delivery) for delivery in session.scalars(query)]


def delivery_read(delivery: AlertDelivery) -> DeliveryRead:
    """The API view of a delivery with its attempts."""
    return DeliveryRead(
        id=delivery.id,
        channel_id=delivery.channel_id,
        channel_name=delivery.channel.name,
        kind=delivery.channel.kind,
        event=cast(NotificationEvent, delivery.event),
        rule_key=delivery.rule_key,
        incident_ids=list(delivery.incident_ids or []),
        status=delivery.status,
        created_at=delivery.created_at,
        attempts=[DeliveryAttemptRead.model_validate(a) for a in delivery.attempts],
    )
