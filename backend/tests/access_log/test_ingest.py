"""Access-log aggregates through the real push endpoint: stored once, refused alone when bad."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import orjson
import pytest
from app.access_log.models import AccessLogFiles, LogStats, LogUpstreamStats
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.access_log.factories import (
    access_log,
    latencies,
    log_file,
    log_sample,
    site,
    sketch_json,
)
from tests.agents.payloads import push_body, recent
from tests.hosts.factories import HostWithToken, make_host

PUSH = "/api/v1/agent/push"
FACTS = {"nginx_version": "1.22.1", "cpu_count": 2}


def push(
    client: TestClient, host: HostWithToken, samples: list[dict[str, Any]], **body: Any
) -> Any:
    """POST a push of these samples as the host; the reply's JSON."""
    reply = client.post(
        PUSH,
        content=orjson.dumps(push_body(samples, agent_id=host.agent_id, **body)),
        headers={"Authorization": f"Bearer {host.token}"},
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


def site_rows(session: Session, host_id: int) -> list[LogStats]:
    """The host's log_stats rows by seq and site."""
    session.expire_all()
    return list(
        session.scalars(
            select(LogStats)
            .where(LogStats.host_id == host_id)
            .order_by(LogStats.seq, LogStats.site)
        )
    )


def realistic_log(times: list[float], *, lines: int) -> dict[str, Any]:
    """Two sites behind a cache and an upstream, as a busy interval of the demo's caching host."""
    shop = site(
        "shop.example.com",
        times=times,
        upstream_times=[t for t in times if t > 0],
        status={"1xx": 0, "2xx": len(times) - 14, "3xx": 2, "4xx": 5, "5xx": 7,
                "499": 1, "500": 1, "502": 4, "503": 1, "504": 1},
        cache={"HIT": 60, "MISS": 25, "EXPIRED": 3, "STALE": 2, "UPDATING": 1,
               "REVALIDATED": 1, "BYPASS": 8},
        get_2xx=len(times) - 20,
        upstream_errors=3,
    )  # fmt: skip
    static = site("static.example.com", times=[0.0, 0.0, 0.001], upstream_times=[])
    return access_log(
        [shop, static],
        files=[log_file(lines=lines, unparsed=2, unparsed_sample='10.0.0.x - - "GET /…"')],
        upstreams=[
            {"site": "shop.example.com", "upstream": "10.0.0.7:8080", "attempts": 90,
             "errors": 3, "response_time": sketch_json(times[:90])},
            {"site": "shop.example.com", "upstream": "10.0.0.8:8080", "attempts": 10,
             "errors": 0, "response_time": sketch_json(times[90:])},
        ],
        top_paths=[
            {"site": "shop.example.com", "path": "/api/items/:id", "requests": 40,
             "time_sum": 1.25, "time_max": 0.31},
        ],
    )  # fmt: skip


@pytest.mark.parametrize("path", ["per-push", "group commit"])
def test_a_realistic_access_log_is_stored_per_site_and_upstream(
    client: TestClient, db_session: Session, path: str
) -> None:
    host = make_host()
    first, second = latencies(120, seed=1), latencies(120, seed=2)
    samples = [
        log_sample(1, recent(20), realistic_log(first, lines=123)),
        log_sample(2, recent(10), realistic_log(second, lines=456)),
    ]
    # Facts send a push down the per-push path; a plain append goes through the group commit.
    reply = push(client, host, samples, **({"facts": FACTS} if path == "per-push" else {}))
    assert (reply["accepted"], reply["rejected"]) == (2, [])
    rows = site_rows(db_session, host.id)
    assert [(row.seq, row.site) for row in rows] == [
        (1, "shop.example.com"),
        (1, "static.example.com"),
        (2, "shop.example.com"),
        (2, "static.example.com"),
    ]
    shop = rows[2]
    assert shop.requests == 120
    assert (shop.status_2xx, shop.status_5xx, shop.status_499, shop.status_502) == (106, 7, 1, 4)
    assert (shop.cache_hit, shop.cache_miss, shop.cache_bypass, shop.cache_revalidated) == (
        60,
        25,
        8,
        1,
    )
    assert (shop.get_2xx, shop.bytes_sent, shop.upstream_errors) == (100, 4096, 3)
    assert shop.request_time == sketch_json(second)
    assert shop.upstream_time == sketch_json([t for t in second if t > 0])
    assert shop.top_paths == [["/api/items/:id", 40, 1.25, 0.31]]
    # A site without upstream requests has no upstream sketch (None, not an empty one).
    assert rows[3].upstream_time is None
    assert rows[3].top_paths is None
    upstreams = db_session.scalars(
        select(LogUpstreamStats)
        .where(LogUpstreamStats.host_id == host.id, LogUpstreamStats.seq == 2)
        .order_by(LogUpstreamStats.upstream)
    ).all()
    assert [(u.upstream, u.attempts, u.errors) for u in upstreams] == [
        ("10.0.0.7:8080", 90, 3),
        ("10.0.0.8:8080", 10, 0),
    ]
    assert upstreams[0].response_time == sketch_json(second[:90])
    report = db_session.get(AccessLogFiles, host.id)
    assert report is not None
    assert (report.seq, report.files[0]["lines"], report.files[0]["unparsed"]) == (2, 456, 2)


def test_figures_the_format_cannot_give_are_stored_as_absent(
    client: TestClient, db_session: Session
) -> None:
    host = make_host()
    bare = {"site": "/var/log/nginx/access.log", "requests": 30}
    push(client, host, [log_sample(1, recent(10), access_log([bare]))])
    [row] = site_rows(db_session, host.id)
    assert row.requests == 30
    figures = (row.status_2xx, row.cache_hit, row.get_2xx, row.bytes_sent, row.upstream_errors)
    assert figures == (None, None, None, None, None)
    assert (row.request_time, row.upstream_time) == (None, None)


def test_a_replayed_sample_does_not_count_twice(client: TestClient, db_session: Session) -> None:
    host = make_host()
    samples = [
        log_sample(1, recent(30), access_log([site(times=[0.1] * 5)])),
        log_sample(2, recent(20), access_log([site(times=[0.2] * 7)])),
    ]
    push(client, host, samples)
    # The spool replays both after a lost reply; the first one with other figures and another
    # site, which only the idempotency key on (host, seq) can tell is the same sample.
    samples[0]["access_log"] = access_log([site(times=[0.9] * 50), site("other.example.com")])
    again = push(client, host, samples)
    assert (again["accepted"], again["duplicates"]) == (0, 2)
    rows = site_rows(db_session, host.id)
    assert [(row.seq, row.requests) for row in rows] == [(1, 5), (2, 7)]
    assert rows[0].request_time == sketch_json([0.1] * 5)


def test_a_late_replayed_sample_does_not_replace_the_newest_files_report(
    client: TestClient, db_session: Session
) -> None:
    host = make_host()
    newest = access_log([site()], files=[log_file(lines=9)])
    push(client, host, [log_sample(5, recent(10), newest)])
    older = access_log([site()], files=[log_file(state="unreadable", reason="EACCES", lines=0)])
    push(client, host, [log_sample(3, recent(40), older)])
    db_session.expire_all()
    report = db_session.get(AccessLogFiles, host.id)
    assert report is not None
    assert (report.seq, report.files[0]["state"], report.files[0]["lines"]) == (5, "ok", 9)
    # The late sample's own figures are stored all the same.
    assert [row.seq for row in site_rows(db_session, host.id)] == [3, 5]


Mutation = Callable[[dict[str, Any]], None]


def _many_sites(log: dict[str, Any]) -> None:
    log["sites"] = [site(f"site-{i}.example.com") for i in range(201)]


def _many_bins(log: dict[str, Any]) -> None:
    log["sites"][0]["request_time"]["bins"] = {str(i): 1 for i in range(-1000, 1001)}


BAD_ACCESS_LOGS: dict[str, tuple[Mutation, str]] = {
    "another alpha": (lambda log: log.update(alpha=0.02), "alpha"),
    "no alpha": (lambda log: log.pop("alpha"), "alpha"),
    "bin key beyond 5000": (
        lambda log: log["sites"][0]["request_time"]["bins"].update({"5001": 1}),
        "sites[0].request_time.bins",
    ),
    "bin key not an integer": (
        lambda log: log["sites"][0]["request_time"]["bins"].update({"1.5": 1}),
        "sites[0].request_time.bins",
    ),
    "negative bin count": (
        lambda log: log["sites"][0]["upstream_time"]["bins"].update({"-300": -1}),
        "sites[0].upstream_time.bins",
    ),
    "bin count as text": (
        lambda log: log["sites"][0]["request_time"]["bins"].update({"-300": "4"}),
        "sites[0].request_time.bins",
    ),
    "2001 bins": (_many_bins, "sites[0].request_time.bins"),
    "201 sites": (_many_sites, "sites"),
    "a site twice": (lambda log: log["sites"].append(site()), "sites"),
    "site name of 256 characters": (
        lambda log: log["sites"][0].update(site="s" * 256),
        "sites[0].site",
    ),
    "negative requests": (lambda log: log["sites"][0].update(requests=-1), "sites[0].requests"),
    "a status count beyond 32 bits": (
        lambda log: log["sites"][0]["status"].update({"5xx": 2**31}),
        "sites[0].status.5xx",
    ),
    "a cache count that is a float": (
        lambda log: log["sites"][0].update(cache={"HIT": 1.5}),
        "sites[0].cache.HIT",
    ),
    "51 files": (lambda log: log.update(files=[log_file()] * 51), "files"),
    "101 upstreams": (
        lambda log: log.update(
            upstreams=[
                {"site": "a", "upstream": f"10.0.0.{i}:80", "attempts": 1} for i in range(101)
            ]
        ),
        "upstreams",
    ),
    "upstream address of 256 characters": (
        lambda log: log.update(upstreams=[{"site": "a", "upstream": "u" * 256, "attempts": 1}]),
        "upstreams[0].upstream",
    ),
    "101 top paths": (
        lambda log: log.update(
            top_paths=[
                {"site": "shop.example.com", "path": f"/p{i}", "requests": 1} for i in range(101)
            ]
        ),
        "top_paths",
    ),
    "a top path of an unknown site": (
        lambda log: log.update(top_paths=[{"site": "other", "path": "/", "requests": 1}]),
        "",
    ),
    "sites not an array": (lambda log: log.update(sites={"a": 1}), "sites"),
}


@pytest.mark.parametrize(("mutate", "field"), BAD_ACCESS_LOGS.values(), ids=list(BAD_ACCESS_LOGS))
def test_a_bad_access_log_refuses_only_its_sample(
    client: TestClient, db_session: Session, mutate: Mutation, field: str
) -> None:
    host = make_host()
    start = recent(40)
    samples = [
        log_sample(seq, start + timedelta(seconds=10 * seq), access_log([site()]))
        for seq in (1, 2, 3)
    ]
    mutate(samples[1]["access_log"])
    reply = push(client, host, samples)
    expected = "samples[1].access_log" + (f".{field}" if field else "")
    assert [(r["seq"], r["field"]) for r in reply["rejected"]] == [(2, expected)], reply
    assert reply["rejected"][0]["reason"].startswith(expected)
    assert reply["accepted"] == 2
    assert [row.seq for row in site_rows(db_session, host.id)] == [1, 3]


def test_the_alpha_refusal_says_what_the_control_plane_expects(client: TestClient) -> None:
    host = make_host()
    log = access_log([site()])
    log["alpha"] = 0.005
    reply = push(client, host, [log_sample(1, recent(10), log)])
    [refusal] = reply["rejected"]
    assert refusal["reason"] == (
        "samples[0].access_log.alpha: must be 0.01, the sketch accuracy this control plane "
        "merges with (got 0.005)"
    )


def test_a_sample_without_access_log_stores_no_log_rows(
    client: TestClient, db_session: Session
) -> None:
    host = make_host()
    push(client, host, [log_sample(1, recent(10), None)])
    assert db_session.scalar(select(func.count()).select_from(LogStats)) == 0
    assert db_session.get(AccessLogFiles, host.id) is None


def test_a_nul_in_a_site_name_is_stored_replaced_and_costs_no_sample(
    client: TestClient, db_session: Session
) -> None:
    # A site is $host or $http_host, from a request header; PostgreSQL text holds no NUL.
    host = make_host()
    reply = push(client, host, [log_sample(1, recent(10), access_log([site("shop\x00.test")]))])
    assert (reply["accepted"], reply["rejected"]) == (1, [])
    assert [row.site for row in site_rows(db_session, host.id)] == ["shop\ufffd.test"]


def test_figures_of_a_sample_older_than_the_raw_retention_are_not_stored(
    client: TestClient, db_session: Session
) -> None:
    """A spool replayed after more than 3 hours: its samples are stored, the access-log rows
    of its old samples would never be rolled up, so they are not."""
    host = make_host()
    log = access_log([site(times=[0.1] * 5)])
    reply = push(
        client,
        host,
        [log_sample(1, recent(4 * 3600), log), log_sample(2, recent(2 * 3600), log)],
    )
    assert reply["accepted"] == 2
    assert [row.seq for row in site_rows(db_session, host.id)] == [2]
