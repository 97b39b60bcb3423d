"""The email channel through a real SMTP server (aiosmtpd) with STARTTLS or TLS, and AUTH."""

from __future__ import annotations

from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from app.notify import service
from app.notify.delivery import attempt_delivery
from app.notify.kinds import ChannelKind
from app.notify.models import AlertDelivery, DeliveryStatus
from sqlalchemy.orm import Session

from tests.notify.factories import CAUSE, EXTERNAL_URL, alert, make_channel, notification
from tests.notify.receivers import MailSink, TlsFiles, make_tls_files, smtp_server

PASSWORD = "smtp-pass-Xq9"


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TlsFiles:
    """A private CA the channel's TLS client trusts (as SSL_CERT_FILE would in a deployment)."""
    files = make_tls_files(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(files.ca_cert))
    return files


@pytest.fixture
def sink() -> MailSink:
    return MailSink(username="alerts@example.org", password=PASSWORD)


@pytest.fixture
def starttls_port(sink: MailSink, tls: TlsFiles) -> Iterator[int]:
    """SMTP with STARTTLS required and AUTH only after it (aiosmtpd's auth_require_tls)."""
    with smtp_server(
        sink,
        tls_context=tls.server_context(),
        require_starttls=True,
        auth_required=True,
        auth_require_tls=True,
    ) as port:
        yield port


def email_settings(port: int, **changes: Any) -> dict[str, Any]:
    settings = {
        "host": "127.0.0.1",
        "port": port,
        "security": "starttls",
        "username": "alerts@example.org",
        "from_addr": "alerts@example.org",
        "to_addrs": ["ops@example.org", "oncall@example.org"],
    }
    settings.update(changes)
    return settings


def send(session: Session, channel_id: int, *alerts: Any, event: str = "firing") -> AlertDelivery:
    [delivery_id] = service.enqueue(
        session=session, channel_ids=[channel_id], notification=notification(*alerts, event=event)
    )
    session.commit()
    attempt_delivery(session=session, delivery_id=delivery_id, timeout_s=5)
    session.expire_all()
    return session.get_one(AlertDelivery, delivery_id)


def parsed(content: bytes) -> EmailMessage:
    message = message_from_bytes(content, policy=policy.default)
    assert isinstance(message, EmailMessage)
    return message


def test_a_firing_alert_arrives_by_starttls_with_auth(
    db_session: Session, sink: MailSink, starttls_port: int
) -> None:
    channel = make_channel(
        "ops-mail", ChannelKind.email, email_settings(starttls_port), {"password": PASSWORD}
    )
    delivery = send(db_session, channel.id, alert("edge-1"), alert("edge-2", host_id=4))
    assert delivery.status is DeliveryStatus.sent, delivery.attempts[-1].error
    [mail] = sink.messages
    assert mail.login == "alerts@example.org"
    assert mail.mail_from == "alerts@example.org"
    assert mail.rcpt_tos == ["ops@example.org", "oncall@example.org"]
    message = parsed(mail.content)
    assert message["Subject"] == "[FIRING:2] Dropped connections"
    assert message["To"] == "ops@example.org, oncall@example.org"
    assert message["Auto-Submitted"] == "auto-generated"
    assert message.get_content_type() == "text/plain"
    body = message.get_content()
    assert "edge-1 (critical, firing since 2026-11-30 14:05 UTC)" in body
    assert "edge-2" in body
    assert f"Cause: {CAUSE}" in body
    assert f"Incident: {EXTERNAL_URL}/alerts/incidents/7" in body
    assert f"Config finding: {EXTERNAL_URL}/hosts/3/config?finding=12" in body
    assert "Value: 412 connections" in body


def test_a_resolved_notification_says_so_in_the_subject(
    db_session: Session, sink: MailSink, starttls_port: int
) -> None:
    channel = make_channel(
        "ops-mail", ChannelKind.email, email_settings(starttls_port), {"password": PASSWORD}
    )
    delivery = send(db_session, channel.id, alert(status="resolved"), event="resolved")
    assert delivery.status is DeliveryStatus.sent
    message = parsed(sink.messages[0].content)
    assert message["Subject"] == "[RESOLVED] Dropped connections"
    assert "resolved at 2026-11-30 14:14 UTC" in message.get_content()


def test_a_wrong_password_fails_at_once_without_leaking_it(
    db_session: Session, sink: MailSink, starttls_port: int
) -> None:
    channel = make_channel(
        "ops-mail", ChannelKind.email, email_settings(starttls_port), {"password": "wrong-pass-77"}
    )
    delivery = send(db_session, channel.id, alert())
    assert delivery.status is DeliveryStatus.failed
    [attempt] = delivery.attempts
    assert attempt.status_code == 535
    assert attempt.error is not None and "wrong-pass-77" not in attempt.error
    assert sink.messages == []


def test_implicit_tls(db_session: Session, sink: MailSink, tls: TlsFiles) -> None:
    with smtp_server(sink, ssl_context=tls.server_context(), auth_require_tls=False) as port:
        channel = make_channel(
            "tls-mail",
            ChannelKind.email,
            email_settings(port, security="tls"),
            {"password": PASSWORD},
        )
        delivery = send(db_session, channel.id, alert())
    assert delivery.status is DeliveryStatus.sent, delivery.attempts[-1].error
    assert parsed(sink.messages[0].content)["Subject"] == "[FIRING:1] Dropped connections"


def test_an_untrusted_certificate_is_refused(
    db_session: Session, sink: MailSink, starttls_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE")
    channel = make_channel(
        "ops-mail", ChannelKind.email, email_settings(starttls_port), {"password": PASSWORD}
    )
    delivery = send(db_session, channel.id, alert())
    assert delivery.status is DeliveryStatus.failed
    assert "CERTIFICATE_VERIFY_FAILED" in (delivery.attempts[0].error or "")
    assert sink.messages == []


def test_plain_smtp_without_auth(db_session: Session, sink: MailSink) -> None:
    with smtp_server(sink, auth_require_tls=False) as port:
        settings = email_settings(port, security="none", username=None)
        channel = make_channel("plain-mail", ChannelKind.email, settings)
        delivery = send(db_session, channel.id, alert())
    assert delivery.status is DeliveryStatus.sent, delivery.attempts[-1].error
    assert sink.messages[0].login is None
