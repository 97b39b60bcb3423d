"""GET /hosts/{id}/access-log and GET /access-log/summary: figures, missing reasons, errors."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from app.access_log.aggregate import ROLLUP_LEVEL
from app.access_log.models import AccessLogFiles, LogStats, LogStatsRollup, LogUpstreamRollup
from app.access_log.packed import pack_protocol
from app.access_log.rollups import rollup_logs
from app.configs.analyzer import analyze_snapshot
from app.core.db import SessionLocal, utcnow
from app.findings.models import Finding
from app.metrics import rollups
from fastapi.testclient import TestClient
from nginx_fleet_analyzer.latency_sketch import ALPHA, Sketch, level_alpha
from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from tests.access_log.factories import (
    access_log,
    insert_log_rows,
    latencies,
    log_file,
    log_row,
    log_sample,
    site,
    sketch_json,
)
from tests.agents.payloads import push_body, recent
from tests.configs.factories import host_with_config
from tests.hosts.factories import make_host

# Percentiles read off rollups are as accurate as the rollups' sketches.
ROLLUP_ALPHA = level_alpha(ROLLUP_LEVEL)

# A cache, and a log format with neither $upstream_cache_status nor $request_time.
CACHED_PLAIN_LOG = """# configuration file /etc/nginx/nginx.conf:
events {}
http {
    log_format main '$remote_addr - $remote_user [$time_local] "$request" $status';
    access_log /var/log/nginx/access.log main;
    proxy_cache_path /var/cache/nginx keys_zone=shop:10m max_size=100m;
    server {
        listen 80;
        server_name shop.example.com;
        location / {
            proxy_pass http://127.0.0.1:8080;
            proxy_cache shop;
        }
    }
}
"""


def nearest_rank(values: list[float], q: float) -> float:
    """The exact quantile the sketches approximate: the ceil(q·n)-th smallest value."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def set_files(host_id: int, files: list[dict[str, Any]]) -> None:
    """Store a files report for the host, as its newest sample would."""
    with SessionLocal() as session:
        session.merge(AccessLogFiles(host_id=host_id, ts=utcnow(), seq=1, files=files))
        session.commit()


def get_log(client: TestClient, host_id: int, **params: Any) -> dict[str, Any]:
    """GET the host's access-log figures; the body of a 200."""
    reply = client.get(f"/api/v1/hosts/{host_id}/access-log", params=params)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def test_series_totals_upstreams_and_sites_of_a_host(viewer_client: TestClient) -> None:
    host = make_host()
    now = utcnow()
    start = now - timedelta(minutes=10)
    everything: list[float] = []
    rows, upstreams = [], []
    for seq in range(1, 31):
        ts = start + timedelta(seconds=10 * seq)
        times = latencies(50, seed=seq)
        everything += times
        rows.append(
            log_row(host.id, ts, seq, "shop", times=times, upstream_times=times[:10],
                    status_2xx=45, status_4xx=3, status_5xx=2, status_499=1, status_502=2,
                    cache_hit=30, cache_miss=10, bytes_sent=1000,
                    top_paths=[["/api/:id", 5, 0.5, 0.2]])
        )  # fmt: skip
        rows.append(log_row(host.id, ts, seq, "static", times=[0.0] * 5, status_2xx=5))
        upstreams.append(
            {"host_id": host.id, "ts": ts, "seq": seq, "site": "shop", "upstream": "10.0.0.7:80",
             "attempts": 10, "errors": 1, "response_time": None}
        )  # fmt: skip
    insert_log_rows(rows, upstreams)
    set_files(host.id, [log_file()])
    body = get_log(viewer_client, host.id, range="1h")
    assert (body["step_s"], body["site"]) == (10, None)
    assert len(body["points"]) == 30
    point = body["points"][0]
    assert point["requests"] == 55
    assert point["req_per_s"] == pytest.approx(5.5)
    assert point["hit_ratio"] == pytest.approx(0.75)
    totals = body["totals"]
    assert totals["requests"] == 30 * 55
    assert (totals["status_5xx"], totals["status_499"], totals["status_502"]) == (60, 30, 60)
    assert totals["share_5xx"] == pytest.approx(60 / 1650)
    assert totals["share_499"] == pytest.approx(30 / 1650)
    assert totals["bytes_sent"] == 30_000
    # Over the five minutes the rows cover, not the hour asked for.
    assert totals["req_per_s"] == pytest.approx(1650 / 300)
    # Percentiles of the merged sketches, against the exact ones over every value.
    union = everything + [0.0] * 150
    for q, name in [(0.5, "p50"), (0.9, "p90"), (0.95, "p95"), (0.99, "p99")]:
        truth = nearest_rank(union, q)
        assert abs(totals[f"request_time_{name}_s"] - truth) <= ALPHA * truth
    assert body["upstreams"] == [
        {"upstream": "10.0.0.7:80", "attempts": 300, "errors": 30, "error_share": 0.1,
         "response_time_p50_s": None, "response_time_p95_s": None, "response_time_p99_s": None}
    ]  # fmt: skip
    assert body["sites"] == [
        {"site": "shop", "requests": 1500},
        {"site": "static", "requests": 150},
    ]
    assert body["top_paths"] == [
        {"site": "shop", "path": "/api/:id", "requests": 150, "time_sum_s": pytest.approx(15.0),
         "time_max_s": 0.2, "time_mean_s": pytest.approx(0.1)}
    ]  # fmt: skip
    assert body["missing"] == {
        "hit_ratio": None, "latency": None, "upstream_latency": None, "status": None
    }  # fmt: skip
    assert [f["path"] for f in body["files"]] == ["/var/log/nginx/access.log"]

    shop = get_log(viewer_client, host.id, range="1h", site="static")
    assert shop["totals"]["requests"] == 150
    assert shop["totals"]["request_time_p99_s"] == 0.0
    assert shop["upstreams"] == []
    # The picker still lists every site.
    assert [s["site"] for s in shop["sites"]] == ["shop", "static"]
    assert shop["missing"]["hit_ratio"]["reason"] == "no_traffic"


def test_a_week_is_read_from_the_hour_rollups(
    viewer_client: TestClient, db_session: Session
) -> None:
    """Minute rollups are kept 2 days (app.access_log.settings): a week reads hours."""
    host = make_host()
    old = utcnow().replace(second=0, microsecond=0) - timedelta(hours=2)
    insert_log_rows([log_row(host.id, old + timedelta(seconds=s), s, times=[0.5]) for s in (1, 2)])
    rollups.rollup_range(session=db_session, host_id=host.id, start=old, end=old)
    # The raw rows and the minutes are gone: only the hour rollups can answer.
    with SessionLocal() as session:
        session.execute(delete(LogStats))
        session.execute(delete(LogStatsRollup).where(LogStatsRollup.resolution == "1m"))
        session.commit()
    body = get_log(viewer_client, host.id, range="7d")
    assert body["step_s"] == 3600
    assert [p["requests"] for p in body["points"]] == [2]
    assert body["totals"]["request_time_p50_s"] == pytest.approx(0.5, rel=ROLLUP_ALPHA)


def test_a_day_reads_minute_rollups_and_its_newest_minutes_from_raw_rows(
    viewer_client: TestClient, db_session: Session
) -> None:
    """Raw rows are kept 3 hours: 24 h reads minutes, except the last few that the rollup task
    may not have rolled up yet; nothing is counted twice."""
    host = make_host()
    now = utcnow()
    old = now.replace(second=0, microsecond=0) - timedelta(hours=5)
    insert_log_rows([log_row(host.id, old + timedelta(seconds=s), s, times=[0.5]) for s in (1, 2)])
    # Rolled up back then, when its rows were new.
    end = old + timedelta(minutes=1)
    rollup_logs(db_session, start=old, end=end, now=end, host_id=host.id)
    db_session.commit()
    with SessionLocal() as session:
        session.execute(delete(LogStats))
        session.commit()
    # Rows of the last minute (not rolled up yet), and one of 2 hours ago both rolled up and
    # still kept raw.
    hour_ago = now.replace(second=0, microsecond=0) - timedelta(hours=2)
    insert_log_rows(
        [
            log_row(host.id, now - timedelta(seconds=30), 10, times=[0.1] * 3),
            log_row(host.id, now - timedelta(seconds=20), 11, times=[0.1] * 4),
            log_row(host.id, hour_ago + timedelta(seconds=5), 12, times=[0.1] * 5),
        ]
    )
    rollups.rollup_range(session=db_session, host_id=host.id, start=hour_ago, end=hour_ago)
    body = get_log(viewer_client, host.id, range="24h")
    assert body["step_s"] == 180
    assert sum(p["requests"] for p in body["points"]) == 2 + 3 + 4 + 5
    assert body["totals"]["requests"] == 14
    assert body["sites"] == [{"site": "shop.example.com", "requests": 14}]
    # The newest bucket's rate is over the time its raw rows cover (10 s each), not 180 s.
    newest = body["points"][-1]
    covered = 20 if newest["requests"] == 7 else 10
    assert newest["req_per_s"] == pytest.approx(newest["requests"] / covered)


def test_a_day_merges_minutes_stored_at_1_and_at_2_percent_with_its_raw_rows(
    viewer_client: TestClient, db_session: Session
) -> None:
    """A minute rolled up before ROLLUP_LEVEL (protocol bins), one after it and the newest
    raw rows: every sketch is brought to the coarsest level before counts are added."""
    host = make_host()
    now = utcnow()
    stored_before = now.replace(second=0, microsecond=0) - timedelta(hours=5)
    early, middle, late = [0.004] * 30, [0.25] * 20, [3.0] * 10
    upstream = {"host_id": host.id, "site": "shop.example.com", "upstream": "10.0.0.7:80"}
    db_session.execute(
        insert(LogStatsRollup),
        [{"host_id": host.id, "resolution": "1m", "bucket_start": stored_before,
          "site": "shop.example.com", "requests": 30,
          "request_time": pack_protocol(sketch_json(early), deflate=True)}],
    )  # fmt: skip
    db_session.execute(
        insert(LogUpstreamRollup),
        [{**upstream, "resolution": "1m", "bucket_start": stored_before, "attempts": 30,
          "errors": 0, "response_time": pack_protocol(sketch_json(early), deflate=True)}],
    )  # fmt: skip
    db_session.commit()
    rolled = now.replace(second=0, microsecond=0) - timedelta(hours=2)
    insert_log_rows(
        [log_row(host.id, rolled + timedelta(seconds=5), 1, times=middle),
         log_row(host.id, now - timedelta(seconds=20), 2, times=late)],
        [{**upstream, "ts": rolled + timedelta(seconds=5), "seq": 1, "attempts": 20,
          "errors": 0, "response_time": sketch_json(middle)},
         {**upstream, "ts": now - timedelta(seconds=20), "seq": 2, "attempts": 10,
          "errors": 0, "response_time": sketch_json(late)}],
    )  # fmt: skip
    rollups.rollup_range(session=db_session, host_id=host.id, start=rolled, end=rolled)
    body = get_log(viewer_client, host.id, range="24h")
    totals = body["totals"]
    assert totals["requests"] == 60
    every = early + middle + late
    expected = Sketch.from_json(sketch_json(every, ROLLUP_LEVEL))
    for q, name in [(0.5, "p50"), (0.9, "p90"), (0.95, "p95"), (0.99, "p99")]:
        assert totals[f"request_time_{name}_s"] == expected.quantile(q)
        truth = nearest_rank(every, q)
        assert abs(totals[f"request_time_{name}_s"] - truth) <= ROLLUP_ALPHA * truth
    [read] = body["upstreams"]
    assert read["attempts"] == 60
    assert read["response_time_p50_s"] == expected.quantile(0.5)
    assert read["response_time_p99_s"] == expected.quantile(0.99)


def test_hit_ratio_counts_stale_updating_and_revalidated_as_hits_and_never_counts_dash(
    viewer_client: TestClient, client: TestClient
) -> None:
    host = make_host()
    cache = {"HIT": 10, "STALE": 5, "UPDATING": 3, "REVALIDATED": 2, "MISS": 30, "EXPIRED": 20,
             "BYPASS": 30, "-": 1000}  # fmt: skip
    log = access_log([site(times=[0.1] * 1100, cache=cache)])
    reply = client.post(
        "/api/v1/agent/push",
        content=orjson.dumps(push_body([log_sample(1, recent(5), log)], agent_id=host.agent_id)),
        headers={"Authorization": f"Bearer {host.token}"},
    )
    assert reply.json()["accepted"] == 1, reply.text
    totals = get_log(viewer_client, host.id)["totals"]
    # 20 of the 100 requests with a cache status were served from the cache.
    assert totals["hit_ratio"] == pytest.approx(0.2)
    assert (totals["cache_stale"], totals["cache_bypass"]) == (5, 30)


def missing_of(client: TestClient, host_id: int) -> dict[str, Any]:
    """The `missing` object of the host's last hour."""
    missing: dict[str, Any] = get_log(client, host_id)["missing"]
    return missing


def test_missing_when_no_access_log_was_ever_reported(viewer_client: TestClient) -> None:
    host = make_host()
    missing = missing_of(viewer_client, host.id)
    assert {figure: item["reason"] for figure, item in missing.items()} == dict.fromkeys(
        ("hit_ratio", "latency", "upstream_latency", "status"), "no_access_log"
    )


def test_missing_when_nginx_writes_no_access_log(viewer_client: TestClient) -> None:
    host = make_host()
    set_files(host.id, [])
    assert missing_of(viewer_client, host.id)["latency"]["reason"] == "no_access_log"


def test_missing_when_the_file_is_unreadable(viewer_client: TestClient) -> None:
    host = make_host()
    set_files(host.id, [log_file(state="unreadable", reason="permission denied", lines=0)])
    latency = missing_of(viewer_client, host.id)["latency"]
    assert latency["reason"] == "file_unreadable"
    assert (latency["path"], latency["file_reason"]) == (
        "/var/log/nginx/access.log",
        "permission denied",
    )


def test_missing_when_lines_do_not_match_their_format(viewer_client: TestClient) -> None:
    host = make_host()
    line = '127.0.0.x - - [25/Nov/2026:10:00:00 +0000] "GET /… HTTP/1.1" 200'
    set_files(host.id, [log_file(lines=40, unparsed=40, unparsed_sample=line)])
    status = missing_of(viewer_client, host.id)["status"]
    assert status["reason"] == "lines_do_not_match"
    assert (status["sample_line"], status["sample_format"]) == (line, "main")


def test_missing_when_the_format_lacks_the_variable_points_at_the_fixing_finding(
    viewer_client: TestClient, db_session: Session
) -> None:
    host, snapshot_id = host_with_config(CACHED_PLAIN_LOG)
    analyze_snapshot(session=db_session, snapshot_id=snapshot_id, now=utcnow())
    lacking = ["request_time", "upstream_response_time", "upstream_cache_status"]
    set_files(host.id, [log_file(missing_fields=lacking)])
    insert_log_rows([log_row(host.id, utcnow() - timedelta(minutes=1), 1, requests=9,
                             status_2xx=9)])  # fmt: skip
    missing = missing_of(viewer_client, host.id)
    assert missing["status"] is None
    findings = {
        row.rule: (row.id, row.key)
        for row in db_session.scalars(select(Finding).where(Finding.host_id == host.id))
    }
    hit_ratio = missing["hit_ratio"]
    assert hit_ratio["reason"] == "format_lacks_field"
    assert (hit_ratio["variable"], hit_ratio["formats"], hit_ratio["rule"]) == (
        "$upstream_cache_status",
        ["main"],
        "C-observable",
    )
    assert (hit_ratio["finding_id"], hit_ratio["finding_key"]) == findings["C-observable"]
    latency = missing["latency"]
    assert (latency["variable"], latency["rule"]) == ("$request_time", "L-fields")
    assert (latency["finding_id"], latency["finding_key"]) == findings["L-fields"]
    assert missing["upstream_latency"]["variable"] == "$upstream_response_time"
    assert "main lacks $upstream_cache_status" in hit_ratio["message"]


def test_missing_for_lack_of_traffic(viewer_client: TestClient) -> None:
    host = make_host()
    set_files(host.id, [log_file()])
    latency = missing_of(viewer_client, host.id)["latency"]
    assert latency["reason"] == "no_traffic"
    assert latency["finding_id"] is None


def test_the_summary_sums_any_hosts_and_sites(viewer_client: TestClient) -> None:
    one, two, three = make_host(), make_host(hostname="b"), make_host(hostname="c")
    ts = utcnow() - timedelta(minutes=5)
    insert_log_rows([
        log_row(one.id, ts, 1, "a", times=[0.1] * 10, status_2xx=9, status_5xx=1),
        log_row(one.id, ts, 1, "b", times=[0.2] * 10, status_2xx=10, status_5xx=0),
        log_row(two.id, ts, 1, "a", times=[0.3] * 20, status_2xx=15, status_5xx=5),
        log_row(three.id, ts, 1, "a", times=[9.0] * 60, status_2xx=60, status_5xx=0),
    ])  # fmt: skip

    def summary(**params: Any) -> dict[str, Any]:
        reply = viewer_client.get("/api/v1/access-log/summary", params=params)
        assert reply.status_code == 200, reply.text
        body: dict[str, Any] = reply.json()
        return body

    both = summary(host_id=[one.id, two.id], site=["a"])
    assert (both["hosts_with_data"], both["totals"]["requests"]) == (2, 30)
    assert both["totals"]["share_5xx"] == pytest.approx(0.2)
    # 10 of 0.1 s and 20 of 0.3 s: the median is a 0.3 s one.
    assert both["totals"]["request_time_p50_s"] == pytest.approx(0.3, rel=ALPHA)
    fleet = summary()
    assert (fleet["host_ids"], fleet["hosts_with_data"], fleet["totals"]["requests"]) == (
        [],
        3,
        100,
    )
    assert fleet["totals"]["request_time_p50_s"] == pytest.approx(9.0, rel=ALPHA)
    nothing = summary(site=["nowhere"])
    assert (nothing["hosts_with_data"], nothing["totals"]["requests"]) == (0, None)


def test_the_endpoints_need_a_session(client: TestClient) -> None:
    host = make_host()
    assert client.get(f"/api/v1/hosts/{host.id}/access-log").status_code == 401
    assert client.get("/api/v1/access-log/summary").status_code == 401


def test_an_unknown_host_is_404(viewer_client: TestClient) -> None:
    host = make_host()
    reply = viewer_client.get("/api/v1/hosts/999999/access-log")
    assert (reply.status_code, reply.json()["detail"]) == (404, "host 999999 does not exist")
    reply = viewer_client.get(
        "/api/v1/access-log/summary", params={"host_id": [host.id, 999998, 999999]}
    )
    assert (reply.status_code, reply.json()["detail"]) == (
        404,
        "hosts 999998, 999999 do not exist",
    )


NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
BAD_RANGES: dict[str, tuple[dict[str, Any], str]] = {
    "end before start": (
        {"start": NOW.isoformat(), "end": (NOW - timedelta(hours=1)).isoformat()},
        "end must be after start",
    ),
    "beyond 800 days": (
        {"start": (NOW - timedelta(days=801)).isoformat(), "end": NOW.isoformat()},
        "the range may span at most 800 days",
    ),
    "preset and start": ({"range": "1h", "start": NOW.isoformat()}, "give either range or start"),
    "no offset": ({"start": "2026-11-25T10:00:00"}, "start: "),
    "unknown preset": ({"range": "2y"}, "range: "),
    "year 10000": ({"end": "9999-12-31T23:00:00-05:00"}, "end: "),
    "a week before year 1": ({"end": "0001-01-02T00:00:00Z", "range": "7d"}, "too early"),
    "a site of 256 characters": ({"site": "s" * 256}, "at most 255 characters"),
    "a site with NUL": ({"site": "a\x00b"}, "NUL"),
}


@pytest.mark.parametrize(("params", "detail"), BAD_RANGES.values(), ids=list(BAD_RANGES))
def test_a_bad_range_is_422_with_a_clear_message(
    viewer_client: TestClient, params: dict[str, Any], detail: str
) -> None:
    host = make_host()
    for path in (f"/api/v1/hosts/{host.id}/access-log", "/api/v1/access-log/summary"):
        reply = viewer_client.get(path, params=params)
        assert reply.status_code == 422, reply.text
        assert detail in reply.json()["detail"]


def test_a_bad_host_id_in_the_summary_is_422(viewer_client: TestClient) -> None:
    reply = viewer_client.get("/api/v1/access-log/summary", params={"host_id": 0})
    assert reply.status_code == 422
    assert reply.json()["detail"].startswith("query.host_id")


def test_a_rate_divides_by_the_time_its_rows_cover(viewer_client: TestClient) -> None:
    host = make_host()
    minute = utcnow().replace(second=0, microsecond=0) - timedelta(minutes=2)
    # Three 10 s samples of one minute bucket (6 h → 60 s buckets): 30 s of traffic, not 60.
    insert_log_rows(
        [log_row(host.id, minute + timedelta(seconds=s), s, requests=30) for s in (5, 15, 25)]
    )
    body = get_log(viewer_client, host.id, range="6h")
    assert body["step_s"] == 60
    [point] = body["points"]
    assert point["req_per_s"] == pytest.approx(3.0)
    assert body["totals"]["req_per_s"] == pytest.approx(3.0)


STATIC_TIMED = """# configuration file /etc/nginx/nginx.conf:
events {}
http {
    log_format timed '$remote_addr [$time_local] "$request" $status rt=$request_time';
    access_log /var/log/nginx/access.log timed;
    server { listen 80; server_name static.example.com; root /srv/www; }
}
"""


def test_figures_a_config_cannot_have_are_not_applicable_rather_than_missing(
    viewer_client: TestClient,
) -> None:
    host, _ = host_with_config(STATIC_TIMED)
    lacking = ["upstream_response_time", "upstream_cache_status"]
    set_files(host.id, [log_file(formats=["timed"], missing_fields=lacking)])
    missing = missing_of(viewer_client, host.id)
    # No cache and nothing proxied: no banner asks for a variable that could never be filled.
    assert missing["hit_ratio"]["reason"] == "not_applicable"
    assert "no location caches" in missing["hit_ratio"]["message"]
    assert missing["upstream_latency"]["reason"] == "not_applicable"
    assert missing["latency"]["reason"] == "no_traffic"
    assert missing["latency"]["message"].startswith("Nothing to show for latency percentiles")


def test_a_format_with_request_time_but_no_upstream_time_names_no_rule(
    viewer_client: TestClient,
) -> None:
    # The cached config proxies; its format has $request_time, so L-fields has nothing to say.
    host, _ = host_with_config(CACHED_PLAIN_LOG)
    set_files(host.id, [log_file(missing_fields=["upstream_response_time"])])
    upstream = missing_of(viewer_client, host.id)["upstream_latency"]
    assert upstream["reason"] == "format_lacks_field"
    assert (upstream["variable"], upstream["rule"]) == ("$upstream_response_time", None)
