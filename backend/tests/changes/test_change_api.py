"""The change routes: roles, state rules, rollback of an applied change."""

from __future__ import annotations

import hashlib

from app.changes.models import ChangeStatus
from app.changes.patches import apply_ops
from app.configs import service as configs_service
from app.core.db import SessionLocal, utcnow
from app.hosts.models import Host
from sqlalchemy import update

from tests.changes.factories import CONF, FILE_TEXT, GZIP_ON_OPS, host_allowed_to_apply, make_change
from tests.conftest import SignedInClient


def test_a_viewer_reads_changes_but_cannot_approve_reject_or_roll_back(
    viewer_client: SignedInClient,
) -> None:
    host, snapshot_id = host_allowed_to_apply()
    change_id = make_change(host.id, snapshot_id)
    assert viewer_client.get(f"/api/v1/changes/{change_id}").status_code == 200
    page = viewer_client.get("/api/v1/changes", params={"host_id": host.id}).json()
    assert page["total"] == 1 and page["items"][0]["hostname"] == "web-1"
    for action in ("approve", "reject", "rollback"):
        reply = viewer_client.post(f"/api/v1/changes/{change_id}/{action}", json={})
        assert reply.status_code == 403, action
    reply = viewer_client.post(
        f"/api/v1/hosts/{host.id}/changes", json={"finding_keys": ["G-off@x"]}
    )
    assert reply.status_code == 403


def test_only_unsent_changes_can_be_rejected(operator_client: SignedInClient) -> None:
    host, snapshot_id = host_allowed_to_apply()
    sent = make_change(host.id, snapshot_id, status=ChangeStatus.sent)
    reply = operator_client.post(f"/api/v1/changes/{sent}/reject", json={"comment": "no"})
    assert reply.status_code == 409 and "sent" in reply.json()["detail"]
    proposed = make_change(host.id, snapshot_id)
    reply = operator_client.post(f"/api/v1/changes/{proposed}/reject", json={"comment": "no"})
    assert reply.status_code == 200 and reply.json()["status"] == "rejected"
    reply = operator_client.post(f"/api/v1/changes/{proposed}/approve", json={})
    assert reply.status_code == 409


def test_a_second_change_waits_for_the_one_in_flight(operator_client: SignedInClient) -> None:
    host, snapshot_id = host_allowed_to_apply()
    busy = make_change(host.id, snapshot_id, status=ChangeStatus.applying)
    waiting = make_change(host.id, snapshot_id)
    reply = operator_client.post(f"/api/v1/changes/{waiting}/approve", json={})
    assert reply.status_code == 409 and f"change {busy}" in reply.json()["detail"]


def test_unknown_changes_and_bad_ids_are_4xx(operator_client: SignedInClient) -> None:
    assert operator_client.get("/api/v1/changes/999999").status_code == 404
    assert operator_client.post("/api/v1/changes/0/approve", json={}).status_code == 422
    assert operator_client.post("/api/v1/changes/999999/approve", json={}).status_code == 404
    assert operator_client.get("/api/v1/changes", params={"status": "nope"}).status_code == 422


def _host_now_runs(host_id: int, dump: str) -> None:
    config_hash = hashlib.sha256(dump.encode()).hexdigest()
    with SessionLocal() as session:
        configs_service.store_snapshot(
            session=session, host_id=host_id, config_hash=config_hash, dump=dump, now=utcnow()
        )
        session.execute(update(Host).where(Host.id == host_id).values(config_hash=config_hash))
        session.commit()


def test_rolling_back_an_applied_change_sends_the_reverse_patch(
    operator_client: SignedInClient,
) -> None:
    host, snapshot_id = host_allowed_to_apply()
    applied = make_change(host.id, snapshot_id, status=ChangeStatus.verified, finished_at=utcnow())
    # Before the host sent its new config, the reverse patch has nothing to apply to.
    reply = operator_client.post(f"/api/v1/changes/{applied}/rollback", json={})
    assert reply.status_code == 409

    patched = apply_ops(FILE_TEXT, GZIP_ON_OPS)
    _host_now_runs(host.id, f"# configuration file {CONF}:\n{patched}\n")
    reply = operator_client.post(f"/api/v1/changes/{applied}/rollback", json={"comment": "undo"})
    assert reply.status_code == 201, reply.text
    rollback = reply.json()
    assert rollback["kind"] == "rollback" and rollback["status"] == "approved"
    assert rollback["reverts_change_id"] == applied
    assert "-    gzip on;" in rollback["diff"] and "+    gzip off;" in rollback["diff"]
    again = operator_client.post(f"/api/v1/changes/{applied}/rollback", json={})
    assert again.json()["id"] == rollback["id"]  # idempotent while it is in flight
    # Only an applied change can be rolled back.
    proposed = make_change(host.id, snapshot_id)
    assert operator_client.post(f"/api/v1/changes/{proposed}/rollback", json={}).status_code == 409


def _engine_key(rule: str, dump: str) -> str:
    from nginx_fleet_analyzer import parse_dump
    from nginx_fleet_analyzer.engine import analyze

    return next(f.key for f in analyze(parse_dump(dump)).findings if f.rule == rule)


def test_a_viewer_previews_the_checked_diff_and_an_operator_proposes_it(
    viewer_client: SignedInClient, operator_client: SignedInClient
) -> None:
    from tests.changes.factories import DUMP

    host, snapshot_id = host_allowed_to_apply()
    key = _engine_key("W-connections", DUMP)
    body = {"finding_keys": [key], "overrides": {"e1": ["2048"]}}
    preview = viewer_client.post(f"/api/v1/hosts/{host.id}/changes/preview", json=body)
    assert preview.status_code == 200, preview.text
    proposal = preview.json()
    assert proposal["ok"] and proposal["snapshot_id"] == snapshot_id
    assert "+    worker_connections 2048;" in proposal["diff"]
    created = operator_client.post(f"/api/v1/hosts/{host.id}/changes", json=body)
    assert created.status_code == 201, created.text
    change = created.json()
    assert change["status"] == "proposed" and change["diff"] == proposal["diff"]
    again = operator_client.post(f"/api/v1/hosts/{host.id}/changes", json=body)
    assert again.json()["id"] == change["id"]  # the same proposal is stored once
    stale = {"finding_keys": ["G-off@/etc/nginx/nginx.conf:http/nowhere"]}
    refused = operator_client.post(f"/api/v1/hosts/{host.id}/changes", json=stale)
    assert refused.status_code == 422 and "stale" in refused.json()["detail"]


def test_a_read_only_host_gets_no_change(operator_client: SignedInClient) -> None:
    from tests.changes.factories import DUMP
    from tests.configs.factories import set_facts

    host, _snapshot_id = host_allowed_to_apply()
    set_facts(host.id, {"nginx_version": "1.22.1", "apply_allowed": False})
    body = {"finding_keys": [_engine_key("W-connections", DUMP)]}
    reply = operator_client.post(f"/api/v1/hosts/{host.id}/changes", json=body)
    assert reply.status_code == 409 and "read-only" in reply.json()["detail"]
    assert operator_client.get(f"/api/v1/hosts/{host.id}").json()["apply_allowed"] is False
