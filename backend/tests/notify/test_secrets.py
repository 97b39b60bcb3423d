"""Channel secrets: encrypted with a key from the settings, generated once outside production."""

from __future__ import annotations

import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from app.core.config import Settings, get_settings
from app.core.errors import InvalidInputError
from app.notify import secrets, service
from app.notify.delivery import attempt_delivery
from app.notify.kinds import ChannelKind
from app.notify.models import AlertChannel, AlertDelivery, DeliveryStatus
from app.notify.schemas import ChannelWrite
from pydantic import ValidationError
from sqlalchemy.orm import Session

from tests.conftest import SignedInClient
from tests.notify.factories import admin_user, make_channel, notification

STRONG_KEY = "0123456789abcdef" * 4


@pytest.fixture
def fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Settings re-read after the test changes the environment, and again afterwards."""
    get_settings.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    get_settings.cache_clear()


def test_the_generated_key_is_private_and_stable(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", env="development")
    keys: list[str] = []
    threads = [
        threading.Thread(target=lambda: keys.append(secrets.secret_key(settings))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(keys)) == 1 and len(keys[0]) >= 48
    key_file = tmp_path / "data" / secrets.SECRET_KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert sorted(p.name for p in key_file.parent.iterdir()) == [secrets.SECRET_KEY_FILE]
    assert secrets.secret_key(settings) == keys[0]


def test_a_configured_key_wins_and_weak_ones_are_refused(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, secret_key=STRONG_KEY)
    assert secrets.secret_key(settings) == STRONG_KEY
    assert not (tmp_path / secrets.SECRET_KEY_FILE).exists()
    for weak in ("short-key", "a" * 64):
        with pytest.raises(ValidationError, match="NGINX_FLEET_SECRET_KEY is too weak"):
            Settings(secret_key=weak)
    assert Settings(secret_key="").secret_key is not None  # empty: unset, not refused


def test_production_without_a_key_refuses_to_store_secrets(
    admin_client: SignedInClient, fresh_settings: pytest.MonkeyPatch
) -> None:
    fresh_settings.setenv("NGINX_FLEET_ENV", "production")
    fresh_settings.setenv("NGINX_FLEET_ADMIN_PASSWORD", "a properly long secret")
    fresh_settings.delenv("NGINX_FLEET_SECRET_KEY", raising=False)
    reply = admin_client.post(
        "/api/v1/alerts/channels",
        json={"name": "s", "kind": "slack", "secrets": {"webhook_url": "https://h.example/x"}},
    )
    assert reply.status_code == 503
    assert "NGINX_FLEET_SECRET_KEY is not set" in reply.json()["detail"]
    fresh_settings.setenv("NGINX_FLEET_SECRET_KEY", STRONG_KEY)
    get_settings.cache_clear()
    reply = admin_client.post(
        "/api/v1/alerts/channels",
        json={"name": "s", "kind": "slack", "secrets": {"webhook_url": "https://h.example/x"}},
    )
    assert reply.status_code == 201, reply.text


def test_round_trip_and_ciphertext() -> None:
    token = secrets.encrypt_secrets({"password": "hunter2-hunter2"})
    assert token is not None and "hunter2" not in token
    assert secrets.decrypt_secrets(token) == {"password": "hunter2-hunter2"}
    assert secrets.encrypt_secrets({}) is None
    assert secrets.decrypt_secrets(None) == {}


def test_after_a_key_change_deliveries_fail_clearly_until_secrets_are_entered_again(
    db_session: Session, fresh_settings: pytest.MonkeyPatch
) -> None:
    channel = make_channel(
        "slack", ChannelKind.slack, secrets={"webhook_url": "http://127.0.0.1:9/services/x"}
    )
    fresh_settings.setenv("NGINX_FLEET_SECRET_KEY", STRONG_KEY)
    get_settings.cache_clear()
    [delivery_id] = service.enqueue(
        session=db_session, channel_ids=[channel.id], notification=notification()
    )
    db_session.commit()
    attempt_delivery(session=db_session, delivery_id=delivery_id)
    delivery = db_session.get_one(AlertDelivery, delivery_id)
    assert delivery.status is DeliveryStatus.failed
    assert "cannot be decrypted" in (delivery.attempts[0].error or "")
    # Saving the channel without its secret asks for it; with it, the channel works again.
    actor = admin_user()
    body = ChannelWrite(name="slack", kind=ChannelKind.slack)
    with pytest.raises(InvalidInputError, match=r"secrets\.webhook_url: required"):
        service.update_channel(session=db_session, channel_id=channel.id, body=body, actor=actor)
    db_session.rollback()
    body = ChannelWrite(
        name="slack", kind=ChannelKind.slack, secrets={"webhook_url": "https://h.example/new"}
    )
    service.update_channel(session=db_session, channel_id=channel.id, body=body, actor=actor)
    stored = db_session.get_one(AlertChannel, channel.id)
    assert secrets.decrypt_secrets(stored.secrets_encrypted) == {
        "webhook_url": "https://h.example/new"
    }
