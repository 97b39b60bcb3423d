"""An ack of one finding follows its directive through edits, and the move to line-free keys."""

from __future__ import annotations

from alembic import command
from app.configs import analyzer
from app.configs.inputs import AnalysisInputs
from app.core.db import get_engine, utcnow
from app.findings.models import Ack, Finding
from app.findings.rekey import rekey_findings_and_acks, stored_facts
from fastapi.testclient import TestClient
from nginx_fleet_analyzer.facts import HostFacts
from sqlalchemy import select
from sqlalchemy.orm import Session

from tests.configs.factories import host_with_config, run_config, set_facts
from tests.conftest import alembic_config

HEADER = "# configuration file /etc/nginx/nginx.conf:\n"
SITE = """\
worker_processes auto;
events {
    worker_connections 512;
}
http {
    server_tokens off;
    server {
        listen 80;
        server_name files.example.com;
        location /files/ {
            root /srv;
            autoindex on;
        }
        location /other/ {
            root /srv;
        }
    }
}
"""
FILES_KEY = (
    "X-autoindex@/etc/nginx/nginx.conf:http/server[files.example.com]/location[/files/]/autoindex"
)


def _analyse(session: Session, host_id: int, snapshot_id: int) -> None:
    outcome = analyzer.analyze_snapshot(session=session, snapshot_id=snapshot_id, now=utcnow())
    assert outcome.analysis_id is not None


def _host(session: Session, text: str = SITE) -> int:
    host, snapshot_id = host_with_config(HEADER + text)
    set_facts(host.id, {"cpu_count": 4})
    _analyse(session, host.id, snapshot_id)
    return host.id


def _push(session: Session, host_id: int, text: str) -> None:
    """The agent reports a new config: a new snapshot, the host's hash, an analysis."""
    _analyse(session, host_id, run_config(session, host_id, HEADER + text))


def _autoindex(client: TestClient, host_id: int) -> list[dict]:  # type: ignore[type-arg]
    reply = client.get(f"/api/v1/hosts/{host_id}/config")
    assert reply.status_code == 200, reply.text
    findings: list[dict] = reply.json()["analysis"]["findings"]  # type: ignore[type-arg]
    return [f for f in findings if f["rule"] == "X-autoindex"]


def _ack_files_listing(client: TestClient, host_id: int) -> None:
    [found] = _autoindex(client, host_id)
    assert found["key"] == FILES_KEY and found["muted"] is False
    assert found["place"] == "http/server[files.example.com]/location[/files/]"
    body = {
        "rule": "X-autoindex",
        "host_id": host_id,
        "finding_key": found["key"],
        "reason": "public mirror, listing wanted",
    }
    assert client.post("/api/v1/acks", json=body).status_code == 201


def test_lines_inserted_above_keep_the_ack(
    operator_client: TestClient, db_session: Session
) -> None:
    host_id = _host(db_session)
    _ack_files_listing(operator_client, host_id)
    _push(db_session, host_id, "# tuned by ops\nuser www-data;\npid /run/nginx.pid;\n" + SITE)
    [found] = _autoindex(operator_client, host_id)
    assert found["line"] == 15 and found["key"] == FILES_KEY and found["muted"] is True


def test_a_line_added_in_the_same_block_keeps_the_ack(
    operator_client: TestClient, db_session: Session
) -> None:
    host_id = _host(db_session)
    _ack_files_listing(operator_client, host_id)
    score = operator_client.get(f"/api/v1/hosts/{host_id}/config").json()["analysis"]["score"]
    edited = SITE.replace(
        "            root /srv;\n            autoindex",
        "            root /srv;\n            expires 1h;\n            autoindex",
    )
    _push(db_session, host_id, edited)
    [found] = _autoindex(operator_client, host_id)
    assert found["line"] == 13 and found["muted"] is True
    analysis = operator_client.get(f"/api/v1/hosts/{host_id}/config").json()["analysis"]
    assert analysis["score"] >= score


def test_moving_the_directive_to_another_block_unmutes_it(
    operator_client: TestClient, db_session: Session
) -> None:
    host_id = _host(db_session)
    _ack_files_listing(operator_client, host_id)
    moved = SITE.replace("            autoindex on;\n", "").replace(
        "        location /other/ {\n", "        location /other/ {\n            autoindex on;\n"
    )
    _push(db_session, host_id, moved)
    [found] = _autoindex(operator_client, host_id)
    assert found["place"].endswith("location[/other/]") and found["muted"] is False


def test_removing_the_directive_leaves_nothing_muted_when_it_comes_back_elsewhere(
    operator_client: TestClient, db_session: Session
) -> None:
    host_id = _host(db_session)
    _ack_files_listing(operator_client, host_id)
    _push(db_session, host_id, SITE.replace("            autoindex on;\n", ""))
    assert _autoindex(operator_client, host_id) == []
    back = SITE.replace("            autoindex on;\n", "").replace(
        "    server_tokens off;\n", "    server_tokens off;\n    autoindex on;\n"
    )
    _push(db_session, host_id, back)
    [found] = _autoindex(operator_client, host_id)
    assert found["key"] == "X-autoindex@/etc/nginx/nginx.conf:http/autoindex"
    assert found["muted"] is False


def _make_legacy(session: Session) -> dict[str, str]:
    """Stored findings back to the keys of before migration 0004; returns new key by old key."""
    rows = session.scalars(select(Finding)).all()
    old_by_new = {}
    for row in rows:
        old = f"{row.rule}@{row.file}:{row.line}"
        old_by_new[row.key] = old
        row.key, row.place, row.directive = old, "", ""
    session.commit()
    return {old: new for new, old in old_by_new.items()}


def _ack(session: Session, rule: str, host_id: int | None, key: str | None) -> int:
    ack = Ack(
        rule=rule,
        host_id=host_id,
        finding_key=key,
        reason="from before",
        created_by="ops",
        created_at=utcnow(),
    )
    session.add(ack)
    session.commit()
    return ack.id


def test_old_line_keys_of_findings_and_acks_are_moved_to_the_new_keys(
    operator_client: TestClient, db_session: Session
) -> None:
    host_id = _host(db_session)
    new_by_old = _make_legacy(db_session)
    old_files = next(old for old, new in new_by_old.items() if new == FILES_KEY)
    assert old_files == "X-autoindex@/etc/nginx/nginx.conf:12"
    host_ack = _ack(db_session, "X-autoindex", host_id, old_files)
    fleet_ack = _ack(db_session, "W-connections", None, "W-connections@/etc/nginx/nginx.conf:3")
    rule_ack = _ack(db_session, "W-nofile", host_id, None)
    stray_ack = _ack(db_session, "X-autoindex", host_id, "X-autoindex@/etc/nginx/nginx.conf:99")

    with get_engine().begin() as connection:
        assert rekey_findings_and_acks(connection) == 2

    db_session.expire_all()
    keys = {ack.id: ack.finding_key for ack in db_session.scalars(select(Ack))}
    assert keys == {
        host_ack: FILES_KEY,
        fleet_ack: "W-connections@/etc/nginx/nginx.conf:events/worker_connections",
        rule_ack: None,
        stray_ack: "X-autoindex@/etc/nginx/nginx.conf:99",
    }
    stored = {row.key for row in db_session.scalars(select(Finding))}
    assert stored == set(new_by_old.values())
    [found] = _autoindex(operator_client, host_id)
    assert found["muted"] is True and found["place"].endswith("location[/files/]")
    # The re-keyed ack keeps muting after an edit above it, as a new ack would.
    _push(db_session, host_id, "user www-data;\n" + SITE)
    assert _autoindex(operator_client, host_id)[0]["muted"] is True


def test_the_facts_an_analysis_ran_with_are_read_back_as_they_were() -> None:
    facts = HostFacts(
        nginx_version=(1, 22, 1),
        cpu_count=4,
        modules=frozenset({"http_ssl_module", "stream"}),
        modules_known=True,
        worker_nofile_limit=65536,
    )
    stored = AnalysisInputs(facts=facts, metrics=None).to_dict()["facts"]
    assert stored_facts(stored) == facts


def test_the_migration_moves_acks_of_a_database_from_before_it(
    operator_client: TestClient, db_session: Session, database_url: str
) -> None:
    host_id = _host(db_session)
    _make_legacy(db_session)
    host_ack = _ack(db_session, "X-autoindex", host_id, "X-autoindex@/etc/nginx/nginx.conf:12")
    db_session.close()
    config = alembic_config(database_url)
    try:
        command.downgrade(config, "0003_auth_hardening")
        command.upgrade(config, "head")
    finally:
        command.upgrade(config, "head")
    assert db_session.get(Ack, host_ack) is not None
    assert db_session.scalars(select(Ack.finding_key)).one() == FILES_KEY
    [found] = _autoindex(operator_client, host_id)
    assert found["key"] == FILES_KEY and found["muted"] is True
    assert found["directive"] == "autoindex"
