"""GET /findings/top counted by the database: latest analyses only, muting as the acks say."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from app.core.db import SessionLocal, utcnow
from app.findings.models import Ack, Finding
from fastapi.testclient import TestClient

from tests.hosts.factories import make_analysis, make_host


def add_findings(analysis_id: int, host_id: int, *found: tuple[str, str, str]) -> None:
    """Insert findings (rule, severity, place) of one analysis."""
    with SessionLocal() as session:
        for rule, severity, place in found:
            session.add(
                Finding(analysis_id=analysis_id, host_id=host_id, key=f"{rule}@f:{place}",
                        place=place, rule=rule, severity=severity, category="workers", file="f",
                        line=1, message=f"{rule} at {place}", doc_url=f"https://doc/{rule}")
            )  # fmt: skip
        session.commit()


def top(client: TestClient) -> list[dict[str, Any]]:
    """The top findings reply."""
    reply = client.get("/api/v1/findings/top")
    assert reply.status_code == 200, reply.text
    body: list[dict[str, Any]] = reply.json()
    return body


def test_only_latest_analyses_count_and_rules_rank_by_hosts(viewer_client: TestClient) -> None:
    a, b, c = (make_host(hostname=name).id for name in "abc")
    old = make_analysis(a, score=50)
    add_findings(old, a, ("R-old", "error", "http"))
    for host_id in (a, b, c):
        analysis = make_analysis(host_id, score=80)
        add_findings(analysis, host_id, ("R-common", "info", "http"))
    add_findings(make_analysis(a, score=70), a, ("R-two", "warning", "http"),
                 ("R-two", "warning", "server"), ("R-common", "info", "http"))  # fmt: skip
    add_findings(make_analysis(b, score=70), b, ("R-two", "error", "http"),
                 ("R-common", "info", "http"))  # fmt: skip
    rows = top(viewer_client)
    # c's latest is its only analysis; a's and b's older ones (R-old, R-common) do not count.
    assert [(r["rule"], r["hosts"], r["findings"]) for r in rows] == [
        ("R-common", 3, 3),
        ("R-two", 2, 3),
    ]
    # The example is the rule's first finding: a's warning, not b's error.
    assert (rows[1]["severity"], rows[1]["example_message"]) == ("warning", "R-two at http")
    assert rows[1]["doc_url"] == "https://doc/R-two"


def test_muted_findings_are_left_out(viewer_client: TestClient) -> None:
    a, b = (make_host(hostname=name).id for name in "ab")
    add_findings(make_analysis(a, score=70), a, ("R-1", "warning", "http"),
                 ("R-1", "warning", "server"), ("R-2", "error", "http"))  # fmt: skip
    add_findings(make_analysis(b, score=70), b, ("R-1", "warning", "http"))
    now = utcnow()
    with SessionLocal() as session:
        session.add_all([
            # Host a's R-1 at "server" only; an expired fleet-wide mute of R-2 does nothing.
            Ack(rule="R-1", host_id=a, finding_key="R-1@f:server", reason="known",
                created_by="t"),
            Ack(rule="R-2", reason="old", created_by="t", expires_at=now - timedelta(hours=1)),
        ])  # fmt: skip
        session.commit()
    counted = {r["rule"]: (r["hosts"], r["findings"]) for r in top(viewer_client)}
    assert counted == {"R-1": (2, 2), "R-2": (1, 1)}
    with SessionLocal() as session:
        session.add(Ack(rule="R-1", reason="fleet plan", created_by="t"))
        session.commit()
    assert [r["rule"] for r in top(viewer_client)] == ["R-2"]
