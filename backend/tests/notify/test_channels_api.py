"""The channels API: admin only, checked input, write-only secrets, tests and deliveries."""

from __future__ import annotations

from typing import Any

import pytest
from app.audit.models import AuditEntry
from app.core.db import get_engine
from app.models import Base
from app.notify import service
from app.notify.models import AlertChannel
from app.users.models import Role
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.conftest import LoginAs, SignedInClient
from tests.notify.factories import alert, notification
from tests.notify.receivers import Reply, http_receiver

CHANNELS = "/api/v1/alerts/channels"
SLACK_SECRET = "T0AAA/B0BBB/zzTopSecretzz"
SMTP_PASSWORD = "pw-Very-Secret-42"
BEARER = "bearer-Very-Secret-43"

EMAIL_SETTINGS = {
    "host": "smtp.example.org",
    "port": 587,
    "security": "starttls",
    "username": "alerts",
    "from_addr": "alerts@example.org",
    "to_addrs": ["ops@example.org"],
}


def create(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    reply = client.post(CHANNELS, json=body)
    assert reply.status_code == 201, reply.text
    created: dict[str, Any] = reply.json()
    return created


def slack_body(
    name: str = "slack", url: str = f"https://hooks.slack.com/services/{SLACK_SECRET}"
) -> dict[str, Any]:
    return {"name": name, "kind": "slack", "secrets": {"webhook_url": url}}


def test_create_read_update_delete(admin_client: SignedInClient, db_session: Session) -> None:
    created = create(
        admin_client,
        {
            "name": "Ops mail",
            "kind": "email",
            "settings": EMAIL_SETTINGS,
            "secrets": {"password": SMTP_PASSWORD},
        },
    )
    assert created == {
        "id": created["id"],
        "name": "Ops mail",
        "kind": "email",
        "enabled": True,
        "settings": EMAIL_SETTINGS,
        "secrets_set": ["password"],
    }
    channel_url = f"{CHANNELS}/{created['id']}"
    assert admin_client.get(channel_url).json() == created
    assert admin_client.get(CHANNELS).json() == [created]
    # An omitted secret keeps its value.
    renamed = admin_client.put(
        channel_url,
        json={"name": "Ops", "kind": "email", "enabled": False, "settings": EMAIL_SETTINGS},
    )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["secrets_set"] == ["password"]
    assert renamed.json()["enabled"] is False
    # An empty string clears it.
    cleared = admin_client.put(
        channel_url,
        json={
            "name": "Ops",
            "kind": "email",
            "settings": EMAIL_SETTINGS,
            "secrets": {"password": ""},
        },
    )
    assert cleared.json()["secrets_set"] == []
    assert admin_client.delete(channel_url).status_code == 204
    assert admin_client.get(channel_url).status_code == 404
    assert admin_client.delete(channel_url).status_code == 404
    actions = db_session.scalars(
        select(AuditEntry.action)
        .where(AuditEntry.action.startswith("alert_channel."))
        .order_by(AuditEntry.id)
    ).all()
    assert actions == [
        "alert_channel.create",
        "alert_channel.update",
        "alert_channel.update",
        "alert_channel.delete",
    ]


def test_secrets_never_leave_in_replies_nor_sit_in_plain_text(
    admin_client: SignedInClient, db_session: Session
) -> None:
    slack = create(admin_client, slack_body())
    hook = create(
        admin_client,
        {
            "name": "hook",
            "kind": "webhook",
            "settings": {"url": "https://example.org/h"},
            "secrets": {"bearer_token": BEARER},
        },
    )
    mail = create(
        admin_client,
        {
            "name": "mail",
            "kind": "email",
            "settings": EMAIL_SETTINGS,
            "secrets": {"password": SMTP_PASSWORD},
        },
    )
    replies = [
        admin_client.get(CHANNELS),
        *(admin_client.get(f"{CHANNELS}/{c['id']}") for c in (slack, hook, mail)),
        admin_client.put(f"{CHANNELS}/{slack['id']}", json={"name": "slack-2", "kind": "slack"}),
        admin_client.put(
            f"{CHANNELS}/{hook['id']}",
            json={"name": "hook", "kind": "webhook", "settings": {"url": "https://example.org/h2"}},
        ),
    ]
    for reply in replies:
        assert reply.status_code == 200, reply.text
        for secret in (SLACK_SECRET, BEARER, SMTP_PASSWORD):
            assert secret not in reply.text
    assert admin_client.get(f"{CHANNELS}/{slack['id']}").json()["secrets_set"] == ["webhook_url"]
    # Not in any table either: channels, audit log, anything.
    with get_engine().connect() as connection:
        for table in Base.metadata.sorted_tables:
            dump = str(connection.execute(select(table)).all())
            for secret in (SLACK_SECRET, BEARER, SMTP_PASSWORD):
                assert secret not in dump, table.name
    stored = db_session.get_one(AlertChannel, slack["id"])
    assert stored.secrets_encrypted and stored.secrets_encrypted.startswith("gAAAAA")  # Fernet


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (
            {"name": "x", "kind": "webhook", "settings": {"url": "ftp://example.org/h"}},
            "settings.url: must be an http:// or https:// URL",
        ),
        (
            {"name": "x", "kind": "webhook", "settings": {"url": "https:///nohost"}},
            "settings.url: must name a host",
        ),
        ({"name": "x", "kind": "webhook", "settings": {}}, "settings.url: Field required"),
        (
            {
                "name": "x",
                "kind": "webhook",
                "settings": {"url": "https://a.example", "verb": "PUT"},
            },
            "settings.verb: Extra inputs are not permitted",
        ),
        (
            {"name": "x", "kind": "webhook", "settings": {"url": "https://u:pw@h.example/"}},
            "settings.url: must not hold a user name or password",
        ),
        (
            {"name": "x", "kind": "pager", "settings": {}},
            "kind: Input should be 'webhook', 'slack' or 'email'",
        ),
        ({"name": "x", "kind": "slack"}, "secrets.webhook_url: required for slack channels"),
        (
            {"name": "x", "kind": "slack", "secrets": {"webhook_url": "javascript:alert(1)"}},
            "secrets.webhook_url: must be an http:// or https:// URL",
        ),
        (
            {
                "name": "x",
                "kind": "webhook",
                "settings": {"url": "https://a.example"},
                "secrets": {"password": "p"},
            },
            "secrets.password: webhook channels have no such secret (they take: bearer_token)",
        ),
        (
            {"name": "x", "kind": "email", "settings": {**EMAIL_SETTINGS, "to_addrs": []}},
            "settings.to_addrs: List should have at least 1 item",
        ),
        (
            {
                "name": "x",
                "kind": "email",
                "settings": {**EMAIL_SETTINGS, "from_addr": "not an address"},
            },
            "settings.from_addr: must be a plain email address",
        ),
        (
            {
                "name": "x",
                "kind": "email",
                "settings": {**EMAIL_SETTINGS, "to_addrs": ["a@b.org\r\nBcc: x@y.org"]},
            },
            "settings.to_addrs[0]: must be a plain email address",
        ),
        (
            {"name": "x", "kind": "email", "settings": {**EMAIL_SETTINGS, "security": "ssl"}},
            "settings.security: Input should be 'starttls', 'tls' or 'none'",
        ),
        (
            {"name": "x", "kind": "email", "settings": {**EMAIL_SETTINGS, "port": 70000}},
            "settings.port: Input should be less than or equal to 65535",
        ),
        (
            {"name": " ", "kind": "slack", "secrets": {"webhook_url": "https://h.example/x"}},
            "name: String should have at least 1 character",
        ),
    ],
)
def test_bad_input_is_a_422_naming_the_field(
    admin_client: SignedInClient, body: dict[str, Any], detail: str
) -> None:
    reply = admin_client.post(CHANNELS, json=body)
    assert reply.status_code == 422, reply.text
    assert detail in reply.json()["detail"]


def test_names_are_unique(admin_client: SignedInClient) -> None:
    first = create(admin_client, slack_body("pager"))
    create(admin_client, slack_body("other"))
    duplicate = admin_client.post(CHANNELS, json=slack_body("pager"))
    assert duplicate.status_code == 409
    assert "'pager' already exists" in duplicate.json()["detail"]
    taken = admin_client.put(f"{CHANNELS}/{first['id']}", json={"name": "other", "kind": "slack"})
    assert taken.status_code == 409


def test_unknown_ids_are_404(admin_client: SignedInClient) -> None:
    for method, path, body in [
        ("GET", f"{CHANNELS}/4242", None),
        ("PUT", f"{CHANNELS}/4242", slack_body()),
        ("DELETE", f"{CHANNELS}/4242", None),
        ("POST", f"{CHANNELS}/4242/test", None),
        ("GET", f"{CHANNELS}/4242/deliveries", None),
    ]:
        reply = admin_client.request(method, path, json=body)
        assert reply.status_code == 404, (method, path, reply.text)
        assert "alert channel 4242 does not exist" in reply.json()["detail"]
    assert admin_client.get(f"{CHANNELS}/0").status_code == 422
    assert admin_client.get(f"{CHANNELS}/abc").status_code == 422


@pytest.mark.parametrize("role", [Role.viewer, Role.operator])
def test_only_admins_touch_channels(
    login_as: LoginAs, admin_client: SignedInClient, role: Role
) -> None:
    channel = create(admin_client, slack_body())
    client = login_as(role)
    for method, path, body in [
        ("GET", CHANNELS, None),
        ("POST", CHANNELS, slack_body("mine")),
        ("GET", f"{CHANNELS}/{channel['id']}", None),
        ("PUT", f"{CHANNELS}/{channel['id']}", slack_body("mine")),
        ("DELETE", f"{CHANNELS}/{channel['id']}", None),
        ("POST", f"{CHANNELS}/{channel['id']}/test", None),
        ("GET", f"{CHANNELS}/{channel['id']}/deliveries", None),
    ]:
        reply = client.request(method, path, json=body)
        assert reply.status_code == 403, (method, path, reply.text)
    assert admin_client.get(CHANNELS).json() == [channel]
    assert client.get("/api/v1/alerts/deliveries", params={"incident_id": 1}).status_code == 200


def test_signed_out_is_401(client: TestClient) -> None:
    assert client.get(CHANNELS).status_code == 401
    assert client.get("/api/v1/alerts/deliveries", params={"incident_id": 1}).status_code == 401


def test_the_test_button_sends_at_once_and_reports_the_outcome(
    admin_client: SignedInClient,
) -> None:
    with http_receiver([Reply(500, body=b"down for maintenance")]) as receiver:
        channel = create(
            admin_client,
            {
                "name": "hook",
                "kind": "webhook",
                "enabled": False,
                "settings": {"url": receiver.url()},
            },
        )
        failed = admin_client.post(f"{CHANNELS}/{channel['id']}/test")
        sent = admin_client.post(f"{CHANNELS}/{channel['id']}/test")
        received = receiver.wait_for(2)
    assert failed.status_code == 200, failed.text
    assert failed.json()["status"] == "failed"  # a test is not retried
    assert failed.json()["attempts"][0]["error"] == "HTTP 500: down for maintenance"
    delivery = sent.json()
    assert delivery["status"] == "sent"
    assert delivery["event"] == "test"
    assert (delivery["channel_id"], delivery["channel_name"], delivery["kind"]) == (
        channel["id"],
        "hook",
        "webhook",
    )
    assert delivery["incident_ids"] == []
    [attempt] = delivery["attempts"]
    assert set(attempt) == {"n", "at", "ok", "status_code", "error", "duration_ms"}
    assert (attempt["n"], attempt["ok"], attempt["status_code"]) == (1, True, 200)
    body = received[1].json()
    assert body["alerts"][0]["labels"]["alertname"] == "test"
    assert body["externalURL"] == "http://testserver"
    listed = admin_client.get(f"{CHANNELS}/{channel['id']}/deliveries", params={"limit": 1})
    assert [d["id"] for d in listed.json()] == [delivery["id"]]
    assert (
        admin_client.get(f"{CHANNELS}/{channel['id']}/deliveries", params={"limit": 0}).status_code
        == 422
    )


def test_a_test_of_a_receiver_that_never_answers_ends_within_the_test_timeout(
    admin_client: SignedInClient,
) -> None:
    from tests.notify.receivers import silent_port

    with silent_port() as port:
        channel = create(
            admin_client,
            {"name": "hole", "kind": "webhook", "settings": {"url": f"http://127.0.0.1:{port}/"}},
        )
        reply = admin_client.post(f"{CHANNELS}/{channel['id']}/test")
    assert reply.status_code == 200
    assert reply.json()["status"] == "failed"
    assert (
        reply.json()["attempts"][0]["error"]
        == f"no answer within {service.TEST_TIMEOUT_S:g} s (ReadTimeout)"
    )


def test_viewers_read_an_incidents_deliveries(
    admin_client: SignedInClient, viewer_client: SignedInClient, db_session: Session
) -> None:
    channel = create(admin_client, slack_body())
    ids = service.enqueue(
        session=db_session,
        channel_ids=[channel["id"]],
        notification=notification(alert(incident_id=5)),
    )
    db_session.commit()
    reply = viewer_client.get("/api/v1/alerts/deliveries", params={"incident_id": 5})
    assert reply.status_code == 200, reply.text
    [delivery] = reply.json()
    assert delivery["id"] == ids[0]
    assert delivery["status"] == "pending"
    assert delivery["attempts"] == []
    assert SLACK_SECRET not in reply.text
    assert viewer_client.get("/api/v1/alerts/deliveries", params={"incident_id": 6}).json() == []
    assert viewer_client.get("/api/v1/alerts/deliveries").status_code == 422
