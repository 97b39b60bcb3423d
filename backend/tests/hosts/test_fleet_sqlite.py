"""Embedded mode: the fleet page, summary and top findings on SQLite."""

from __future__ import annotations

from datetime import timedelta

from app.core.db import utcnow
from app.findings.models import Finding
from app.findings.service import top_findings
from app.hosts import service
from app.hosts.fleet import FleetFilter
from sqlalchemy.orm import Session

from tests.agents.test_push_batching import embedded
from tests.hosts.factories import make_analysis, make_host

__all__ = ["embedded"]  # the SQLite fixture of the batching tests


def test_fleet_queries_on_sqlite(embedded: Session) -> None:
    assert embedded.get_bind().dialect.name == "sqlite"
    now = utcnow()
    edge = make_host(hostname="edge", labels={"env": "prod"}, last_seen_at=now, req_per_s=5.0)
    make_host(hostname="app", labels={"env": "prod"}, last_seen_at=now, req_per_s=None)
    make_host(hostname="old", labels={"env": "dev"}, last_seen_at=now - timedelta(hours=1),
              req_per_s=9.0)  # fmt: skip
    analysis_id = make_analysis(edge.id, score=60, error_count=1)
    embedded.add(
        Finding(analysis_id=analysis_id, host_id=edge.id, key="R-1@f:http", rule="R-1",
                severity="error", category="workers", file="f", line=1, message="m")
    )  # fmt: skip
    embedded.commit()

    def names(**options: object) -> list[str]:
        settings = {
            "fleet_filter": FleetFilter(labels={}),
            "sort": "hostname",
            "order": "asc",
            "limit": 10,
            "offset": 0,
            **options,
        }
        page = service.list_fleet(session=embedded, now=now, **settings)  # type: ignore[arg-type]
        return [host.hostname for host in page.items]

    assert names() == ["app", "edge", "old"]
    assert names(sort="req_per_s", order="desc") == ["old", "edge", "app"]
    assert names(sort="req_per_s", order="asc") == ["edge", "old", "app"]
    assert names(sort="score") == ["edge", "app", "old"]
    assert names(fleet_filter=FleetFilter(labels={"env": {"prod"}})) == ["app", "edge"]
    assert names(fleet_filter=FleetFilter(labels={}, statuses=frozenset({"stale"}))) == ["old"]
    assert names(fleet_filter=FleetFilter(labels={}, hostname_part="DG")) == ["edge"]
    summary = service.fleet_summary(session=embedded, fleet_filter=FleetFilter(labels={}), now=now)
    assert (summary.hosts, summary.by_status.stale, summary.req_per_s) == (3, 1, 5.0)
    assert summary.findings.error == 1
    [top] = top_findings(session=embedded, now=now)
    assert (top.rule, top.hosts, top.findings) == ("R-1", 1, 1)
