"""The alerts API with the hostile look: roles, bad input, unknown ids, files, preview."""

from __future__ import annotations

from datetime import timedelta

from alembic import command
from app.alerts import engine
from app.alerts.models import AlertRule
from app.alerts.rules_file import default_rules, dump_rules
from app.core.db import SessionLocal, utcnow
from fastapi.testclient import TestClient
from sqlalchemy import delete
from sqlalchemy.orm import Session

from tests.conftest import SignedInClient, alembic_config
from tests.hosts.factories import insert_samples, make_host, sample_values

API = "/api/v1"
RULE = {
    "key": "drops-prod",
    "name": "Drops in prod",
    "signal": "dropped_connections",
    "op": ">",
    "threshold": 0,
    "window_s": 120,
    "severity": "critical",
    "scope": {"env": "prod"},
}


def _drop_samples(host_id: int) -> None:
    now = utcnow()
    insert_samples(
        SessionLocal(),
        [
            sample_values(
                host_id,
                i + 1,
                now - (5 - i) * timedelta(seconds=10),
                accepts=100 * (i + 1),
                handled=90 * (i + 1),
            )
            for i in range(5)
        ],
    )


def test_the_migration_seeds_the_default_rules(
    admin_client: SignedInClient, database_url: str
) -> None:
    # Earlier tests emptied the tables: run the alerting migration again on this database.
    command.downgrade(alembic_config(database_url), "0007_access_log")
    command.upgrade(alembic_config(database_url), "head")
    keys = [r["key"] for r in admin_client.get(f"{API}/alerts/rules").json()]
    assert "dropped-connections" in keys and len(keys) == 13


def test_roles_are_enforced(
    viewer_client: SignedInClient,
    operator_client: SignedInClient,
    admin_client: SignedInClient,
    db_session: Session,
) -> None:
    assert viewer_client.get(f"{API}/alerts/rules").status_code == 200
    assert viewer_client.post(f"{API}/alerts/rules", json=RULE).status_code == 403
    assert operator_client.post(f"{API}/alerts/rules", json=RULE).status_code == 403
    assert viewer_client.post(f"{API}/alerts/rules/preview", json=RULE).status_code == 403
    assert operator_client.post(f"{API}/alerts/rules/preview", json=RULE).status_code == 200
    assert operator_client.get(f"{API}/alerts/rules/file").status_code == 403
    silence = {
        "rule_id": None,
        "matchers": [{"label": "env", "op": "=", "value": "prod"}],
        "ends_at": (utcnow() + timedelta(hours=1)).isoformat(),
        "reason": "maintenance",
    }
    assert viewer_client.post(f"{API}/alerts/silences", json=silence).status_code == 403
    created = operator_client.post(f"{API}/alerts/silences", json=silence)
    assert created.status_code == 201, created.text
    assert created.json()["created_by"] and created.json()["active"] is True
    assert viewer_client.delete(f"{API}/alerts/silences/{created.json()['id']}").status_code == 403
    assert (
        operator_client.delete(f"{API}/alerts/silences/{created.json()['id']}").status_code == 204
    )
    listed = operator_client.get(f"{API}/alerts/silences", params={"active": "false"}).json()
    assert listed[0]["active"] is False
    assert admin_client.post(f"{API}/alerts/rules", json=RULE).status_code == 201


def test_unauthenticated_is_refused(client: TestClient) -> None:
    for path in ("/alerts/summary", "/alerts/rules", "/alerts/incidents", "/alerts/signals"):
        assert client.get(f"{API}{path}").status_code == 401


def test_bad_rules_get_a_422_naming_the_field(admin_client: SignedInClient) -> None:
    cases = [
        ({**RULE, "signal": "nope"}, "signal"),
        ({**RULE, "op": "=="}, "op"),
        ({**RULE, "window_s": 0}, "window_s"),
        ({**RULE, "threshold": "NaN"}, "threshold"),
        ({**RULE, "key": "Has Spaces"}, "key"),
        ({**RULE, "clear_threshold": 5}, "clear_threshold"),
        ({**RULE, "min_requests": 10}, "min_requests"),
        ({**RULE, "channel_ids": [99]}, "channel_ids"),
        ({**RULE, "name": "a\u0000b"}, "name"),
        ({**RULE, "extra": 1}, "extra"),
    ]
    for body, field in cases:
        reply = admin_client.post(f"{API}/alerts/rules", json=body)
        assert reply.status_code == 422, (field, reply.text)
        assert field in reply.text, (field, reply.text)


def test_unknown_ids_are_404(admin_client: SignedInClient) -> None:
    assert admin_client.get(f"{API}/alerts/rules/999").status_code == 404
    assert admin_client.put(f"{API}/alerts/rules/999", json=RULE).status_code == 404
    assert admin_client.delete(f"{API}/alerts/rules/999").status_code == 404
    assert admin_client.get(f"{API}/alerts/incidents/999").status_code == 404
    assert admin_client.delete(f"{API}/alerts/silences/999").status_code == 404
    bad_id = admin_client.get(f"{API}/alerts/rules/99999999999")
    assert bad_id.status_code == 422
    periods = admin_client.get(
        f"{API}/hosts/999/alert-periods",
        params={"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"},
    )
    assert periods.status_code == 404


def test_duplicate_key_is_409(admin_client: SignedInClient) -> None:
    assert admin_client.post(f"{API}/alerts/rules", json=RULE).status_code == 201
    assert admin_client.post(f"{API}/alerts/rules", json=RULE).status_code == 409


def test_silences_need_a_rule_or_matcher_and_a_future_end(operator_client: SignedInClient) -> None:
    future = (utcnow() + timedelta(hours=1)).isoformat()
    everything = operator_client.post(
        f"{API}/alerts/silences", json={"ends_at": future, "reason": "all"}
    )
    assert everything.status_code == 422 and "matcher" in everything.text
    past = operator_client.post(
        f"{API}/alerts/silences",
        json={
            "matchers": [{"label": "host", "op": "=", "value": "a"}],
            "ends_at": (utcnow() - timedelta(minutes=1)).isoformat(),
            "reason": "late",
        },
    )
    assert past.status_code == 422 and "ends_at" in past.text
    forever = operator_client.post(
        f"{API}/alerts/silences",
        json={
            "matchers": [{"label": "host", "op": "=", "value": "a"}],
            "ends_at": (utcnow() + timedelta(days=400)).isoformat(),
            "reason": "forever",
        },
    )
    assert forever.status_code == 422 and "90 days" in forever.text


def test_preview_and_incident_pages(admin_client: SignedInClient, db_session: Session) -> None:
    db_session.execute(delete(AlertRule))
    db_session.commit()
    prod = make_host(hostname="edge-prod", labels={"env": "prod"})
    make_host(hostname="edge-lab", labels={"env": "lab"})
    _drop_samples(prod.id)
    preview = admin_client.post(f"{API}/alerts/rules/preview", json={**RULE, "scope": {}}).json()
    assert preview["evaluated"] == 2 and preview["matching"] == 1
    assert preview["hosts"][0]["hostname"] == "edge-prod" and preview["hosts"][0]["value"] == 40
    assert preview["hosts"][1]["no_data"] is True

    assert admin_client.post(f"{API}/alerts/rules", json=RULE).status_code == 201
    engine.evaluate(session=db_session, now=utcnow())
    summary = admin_client.get(f"{API}/alerts/summary").json()
    assert summary["firing"] == 1 and summary["by_severity"]["critical"] == 1
    page = admin_client.get(f"{API}/alerts/incidents").json()
    item = page["items"][0]
    assert item["hostname"] == "edge-prod" and item["unit"] == "connections"
    assert item["cause"]["code"] in ("worker_connections", "unknown")
    detail = admin_client.get(f"{API}/alerts/incidents/{item['id']}").json()
    assert detail["deliveries"] == []
    assert (
        admin_client.get(f"{API}/alerts/incidents", params={"state": "resolved"}).json()["items"]
        == []
    )
    now = utcnow()
    periods = admin_client.get(
        f"{API}/hosts/{prod.id}/alert-periods",
        params={
            "from": (now - timedelta(hours=1)).isoformat(),
            "to": (now + timedelta(minutes=1)).isoformat(),
        },
    ).json()
    assert periods[0]["rule_key"] == "drops-prod" and periods[0]["end"] is None
    backwards = admin_client.get(
        f"{API}/hosts/{prod.id}/alert-periods",
        params={"from": now.isoformat(), "to": (now - timedelta(hours=1)).isoformat()},
    )
    assert backwards.status_code == 422


def test_rules_file_round_trip_and_errors(
    admin_client: SignedInClient, db_session: Session
) -> None:
    db_session.execute(delete(AlertRule))
    db_session.commit()
    defaults = dump_rules(default_rules(), {})
    reply = admin_client.put(
        f"{API}/alerts/rules/file", content=defaults, headers={"content-type": "application/yaml"}
    )
    assert reply.json() == {"created": 13, "updated": 0}
    exported = admin_client.get(f"{API}/alerts/rules/file")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith(
        "application/yaml"
    )
    text = exported.text.replace("threshold: 80.0", "threshold: 85.0")
    reply = admin_client.put(
        f"{API}/alerts/rules/file", content=text, headers={"content-type": "application/yaml"}
    )
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"created": 0, "updated": 13}
    rules = {r["key"]: r for r in admin_client.get(f"{API}/alerts/rules").json()}
    assert rules["open-files-high"]["threshold"] == 85.0
    for bad, needle in (
        ("rules: [", "YAML"),
        ("rules:\n- {key: x}\n", "rules[0]"),
        (b"\xff\xfe", "UTF-8"),
    ):
        reply = admin_client.put(
            f"{API}/alerts/rules/file", content=bad, headers={"content-type": "application/yaml"}
        )
        assert reply.status_code == 422 and needle in reply.text, reply.text
    # Nothing of a refused file was stored.
    assert len(admin_client.get(f"{API}/alerts/rules").json()) == 13
