"""Log formats in the styles real deployments use, written by a real nginx, read by the agent.

Each format is written beside a JSON reference log of the same requests (same nginx, same
server); the agent's parser must read every line of the format under test, and the figures it
derives must equal those of the reference. The formats are ours, in the shapes found in the
wild: nginx's own commented `main`, an ingress-controller style line with unquoted upstream
lists, a tab-separated one (nginx turns `\\t` in the config into a tab), `escape=none`, and a
JSON one with ISO times.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from nginx_fleet_agent.access_log.aggregate import IntervalStats, Memo
from nginx_fleet_agent.access_log.line_format import LineParser
from nginx_fleet_analyzer.access_logs import discover
from nginx_fleet_analyzer.latency_sketch import ALPHA, Sketch, exact_quantile
from nginx_fleet_analyzer.loader import parse_dump

from tests.log_traffic import (
    UpstreamApp,
    exact_from_json,
    probe_lines,
    request_plan,
    run_load,
    site_config,
)
from tests.nginx_instance import NginxInstance
from tests.test_access_log_nginx import dump_of

FORMATS = {
    # nginx's own example format (commented out in the nginx.conf it ships), with a host.
    "main": (
        "'$remote_addr - $remote_user [$time_local] \"$request\" '\n"
        "        '$status $body_bytes_sent \"$http_referer\" '\n"
        '        \'"$http_user_agent" "$http_x_forwarded_for" $host $request_time\''
    ),
    # Ingress-controller style: upstream lists unquoted, so they hold ", " and " : ".
    "upstreaminfo": (
        '\'$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
        '"$http_referer" "$http_user_agent" $request_length $request_time [$proxy_host] [] '
        "$upstream_addr $upstream_response_length $upstream_response_time $upstream_status "
        "$request_id $host $upstream_cache_status'"
    ),
    # Tab-separated, as log shippers like it.
    "tsv": (
        '"$msec\\t$host\\t$status\\t$body_bytes_sent\\t$request_time\\t'
        '$upstream_response_time\\t$upstream_cache_status\\t$request_method\\t$request_uri"'
    ),
    # No escaping at all: values are written as they are.
    "raw": (
        "escape=none '$host|$status|$body_bytes_sent|$request_time|$upstream_cache_status|"
        "$request|$http_user_agent'"
    ),
    "iso_json": (
        'escape=json \'{"time":"$time_iso8601","request":{"host":"$host",'
        '"line":"$request","status":"$status"},"bytes":"$body_bytes_sent",'
        '"duration":"$request_time","cache":"$upstream_cache_status",'
        '"upstream":{"time":"$upstream_response_time"}}\''
    ),
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_line_of_a_real_deployment_format_is_read_with_the_right_figures(
    nginx_factory: Callable[..., NginxInstance],
    tmp_path: Path,
    app: UpstreamApp,
    cache_dir: Path,
    name: str,
) -> None:
    prefix = tmp_path / "nginx0"
    tested, reference = prefix / "logs" / "tested.log", prefix / "logs" / "reference.log"
    instance = nginx_factory(
        site_config(
            cache_dir,
            tested,
            name,
            app.port,
            formats=f"log_format {name} {FORMATS[name]};",
            more_logs=f"\n        access_log {reference} jsonl;",
        )
    )
    skip = probe_lines(tested)
    run_load(instance.base_url, request_plan(400))
    targets = {t.path: t for t in discover(parse_dump(dump_of(instance)))}
    (fmt,) = targets[str(tested)].formats
    parser = LineParser(fmt)
    text = b"".join(tested.read_bytes().splitlines(keepends=True)[skip:])
    rows = parser.parse(text)
    assert len(rows) == text.count(b"\n") == 400, "every line nginx wrote is read"
    stats = IntervalStats(Memo())
    stats.add_rows(rows, parser.positions, str(tested))
    got = {site["site"]: site for site in stats.to_json()["sites"]}
    exact, lines = exact_from_json(reference, skip=skip)
    assert lines == 400
    assert set(got) == set(exact.requests)
    for site, figures in got.items():
        assert figures["requests"] == exact.requests[site]
        assert {k: v for k, v in figures["status"].items() if v} == dict(exact.status[site])
        assert figures["bytes_sent"] == exact.bytes_sent[site]
        sketch = Sketch.from_json(figures["request_time"])
        for q in (0.5, 0.95, 0.99):
            want = exact_quantile(exact.request_times[site], q)
            got_q = sketch.quantile(q)
            assert want is not None and got_q is not None
            assert abs(got_q - want) <= ALPHA * want + 1e-12
        if "cache" in figures:
            assert {k: v for k, v in figures["cache"].items() if v} == dict(exact.cache[site])
        if "get_2xx" in figures:
            assert figures["get_2xx"] == exact.get_2xx[site]
        if "upstream_time" in figures:
            assert Sketch.from_json(figures["upstream_time"]).count == len(
                exact.upstream_times[site]
            )
