"""GET /hosts/{id}/series: bucket bounds, values and sources."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from app.core.db import utcnow
from app.metrics import rollups
from app.metrics.bucketing import MAX_POINTS
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.hosts.factories import insert_samples, make_host, sample_values


def aligned_now(step_s: int) -> datetime:
    """Now rounded down to a multiple of step_s, so test buckets are whole."""
    epoch = int(utcnow().timestamp())
    return datetime.fromtimestamp(epoch - epoch % step_s, UTC)


def test_24h_series_of_10s_samples_has_at_most_500_points(
    viewer_client: TestClient, db_session: Session
) -> None:
    host = make_host()
    end = utcnow()
    rows = [
        sample_values(
            host.id, seq, end - timedelta(seconds=10 * (8640 - seq)),
            active=seq % 7, req_per_s=float(seq % 3), drops_per_s=float(seq % 5 == 0),
        )
        for seq in range(8640)
    ]  # fmt: skip
    insert_samples(db_session, rows)
    rollups.rollup_range(
        session=db_session, host_id=host.id, start=end - timedelta(days=1), end=end
    )
    reply = viewer_client.get(f"/api/v1/hosts/{host.id}/series", params={"range": "24h"})
    assert reply.status_code == 200, reply.text
    series = reply.json()
    assert series["step_s"] == 180
    assert series["host_id"] == host.id
    assert 470 <= len(series["points"]) <= MAX_POINTS + 1
    full = series["points"][len(series["points"]) // 2]
    # 18 samples per bucket: active cycles 0..6 so its max is 6; req_per_s averages to 1.
    assert full["active"] == 6
    assert full["req_per_s"] == pytest.approx(1.0, abs=0.12)
    assert full["drops_per_s"] == 1.0
    stamps = [point["ts"] for point in series["points"]]
    assert stamps == sorted(stamps)


def test_bucket_values_are_averages_and_maxima(
    viewer_client: TestClient, db_session: Session
) -> None:
    host = make_host()
    start = aligned_now(60) - timedelta(minutes=10)
    insert_samples(db_session, [
        sample_values(host.id, 1, start, active=2, cpu_pct=10.0, drops_per_s=0.0),
        sample_values(host.id, 2, start + timedelta(seconds=10), active=8, cpu_pct=30.0,
                      drops_per_s=4.0),
        # A minute later: a different bucket with a gap before it.
        sample_values(host.id, 3, start + timedelta(minutes=3), active=1, cpu_pct=50.0),
    ])  # fmt: skip
    params = {"from": start.isoformat(), "to": (start + timedelta(minutes=5)).isoformat()}
    series = viewer_client.get(f"/api/v1/hosts/{host.id}/series", params=params).json()
    assert series["step_s"] == 10
    points = series["points"]
    assert len(points) == 3
    assert points[0]["cpu_pct"] == 10.0
    # Buckets of whole minutes are read from the 1-minute rollups.
    rollups.rollup_range(
        session=db_session, host_id=host.id, start=start, end=start + timedelta(minutes=5)
    )
    wide = viewer_client.get(
        f"/api/v1/hosts/{host.id}/series",
        params={"from": start.isoformat(), "to": (start + timedelta(hours=6)).isoformat()},
    ).json()
    assert wide["step_s"] == 60
    first, second = wide["points"]
    assert first["cpu_pct"] == pytest.approx(20.0)
    assert first["active"] == 8
    assert first["drops_per_s"] == 4.0
    assert second["cpu_pct"] == 50.0
    assert datetime.fromisoformat(second["ts"]) == start + timedelta(minutes=3)


def test_7d_series_reads_minute_rollups(viewer_client: TestClient, db_session: Session) -> None:
    host = make_host()
    now = utcnow()
    old = aligned_now(3600) - timedelta(days=4)
    insert_samples(db_session, [
        sample_values(host.id, 1, old, active=4, req_per_s=2.0),
        sample_values(host.id, 2, old + timedelta(seconds=30), active=6, req_per_s=4.0),
    ])  # fmt: skip
    rollups.rollup_range(
        session=db_session, host_id=host.id, start=old, end=old + timedelta(minutes=1)
    )
    series = viewer_client.get(f"/api/v1/hosts/{host.id}/series", params={"range": "7d"}).json()
    assert series["step_s"] == 1800
    [point] = series["points"]
    assert point["req_per_s"] == pytest.approx(3.0)
    assert point["active"] == 6
    assert datetime.fromisoformat(point["ts"]) <= old < now


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"range": "2h"}, "range"),
        ({"range": "1h", "from": "2026-01-01T00:00:00Z"}, "either range or from/to"),
        ({"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "to must be after from"),
        ({"to": "2026-01-01T00:00:00Z"}, "to needs from"),
        ({"from": "2026-01-01T00:00:00"}, "from"),
    ],
)
def test_bad_range_is_422(viewer_client: TestClient, params: dict[str, str], message: str) -> None:
    host = make_host()
    reply = viewer_client.get(f"/api/v1/hosts/{host.id}/series", params=params)
    assert reply.status_code == 422
    assert message in reply.json()["detail"]


def test_series_of_unknown_host_is_404(viewer_client: TestClient) -> None:
    assert viewer_client.get("/api/v1/hosts/12345/series").status_code == 404
