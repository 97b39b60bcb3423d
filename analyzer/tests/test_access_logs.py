"""Where access logs go and in which format, as nginx decides it (ngx_http_log_module.c)."""

from __future__ import annotations

import pytest
from nginx_fleet_analyzer.access_logs import COMBINED_FORMAT, LogFormat, discover
from nginx_fleet_analyzer.latency_sketch import ALPHA, Sketch, exact_quantile
from nginx_fleet_analyzer.loader import parse_text


def targets(text: str, **kwargs: str) -> dict[str, tuple[str, str | None, list[str], bool]]:
    found = discover(parse_text(text), **kwargs)
    return {t.path: (t.state, t.reason, [f.name for f in t.formats], t.conditional) for t in found}


def test_no_access_log_anywhere_writes_combined_to_the_compiled_in_path() -> None:
    config = "http { server { listen 80; } }"
    assert targets(config, default_path="/var/log/nginx/access.log") == {
        "/var/log/nginx/access.log": ("file", None, ["combined"], False)
    }
    # Without a compiled-in path nginx uses logs/access.log under its prefix.
    assert list(targets(config, prefix="/srv/edge")) == ["/srv/edge/logs/access.log"]


def test_a_block_with_its_own_list_replaces_the_inherited_one_whole() -> None:
    config = """
    http {
        log_format main '$remote_addr $status';
        access_log /var/log/all.log main;
        server { listen 80; server_name a.test; }
        server {
            listen 81; server_name b.test;
            access_log /var/log/b.log;
            location /quiet { access_log off; }
        }
    }"""
    assert targets(config) == {
        "/var/log/all.log": ("file", None, ["main"], False),
        "/var/log/b.log": ("file", None, ["combined"], False),
    }


def test_format_strings_are_concatenated_without_a_separator_and_escape_is_read() -> None:
    config = """
    http {
        log_format j escape=json '{"s":"$status",' '"rt":$request_time}';
        server { listen 80; access_log /l.json j; }
    }"""
    (target,) = discover(parse_text(config))
    assert target.formats == [LogFormat("j", "json", '{"s":"$status","rt":$request_time}')]
    assert target.formats[0].variables == ["status", "request_time"]


def test_targets_nginx_writes_but_the_agent_cannot_tail_say_why() -> None:
    config = """
    http {
        server {
            listen 80;
            access_log syslog:server=127.0.0.1:514;
            access_log /var/log/$host.log;
            access_log /var/log/z.log.gz combined gzip=4;
            access_log logs/cond.log combined if=$loggable buffer=32k;
        }
    }"""
    found = targets(config, prefix="/etc/nginx")
    assert found["syslog:server=127.0.0.1:514"][:2] == (
        "unsupported",
        "sent to syslog, not to a file",
    )
    assert found["/var/log/$host.log"][0] == "unsupported"
    assert found["/var/log/z.log.gz"][1] == "written gzip-compressed"
    assert found["/etc/nginx/logs/cond.log"] == ("file", None, ["combined"], True)


def test_the_servers_writing_a_file_are_named_and_a_path_shared_by_two_formats_has_both() -> None:
    config = """
    http {
        log_format t '$host $status $request_time';
        server { listen 80; server_name a.test www.a.test; access_log /l.log t; }
        server { listen 80; server_name b.test; access_log /l.log; }
    }"""
    (target,) = discover(parse_text(config))
    assert target.servers == ["a.test", "www.a.test", "b.test"]
    assert [f.name for f in target.formats] == ["t", "combined"]
    assert target.formats[1].text == COMBINED_FORMAT


def test_a_config_without_http_has_no_access_logs() -> None:
    assert discover(parse_text("events {}")) == []


def test_sketch_quantiles_stay_within_alpha_of_the_exact_ones_and_merge() -> None:
    values = [0.0] * 50 + [0.001 * (1.07**i) for i in range(400)]
    left, right = Sketch(), Sketch()
    for number, value in enumerate(values):
        (left if number % 2 else right).add(value)
    merged = Sketch.merged([left, right])
    assert merged.count == len(values)
    for q in (0.0, 0.5, 0.9, 0.95, 0.99, 1.0):
        exact = exact_quantile(values, q)
        got = merged.quantile(q)
        assert exact is not None and got is not None
        assert abs(got - exact) <= ALPHA * exact, (q, got, exact)


def test_sketches_of_two_levels_merge_at_the_coarser_one() -> None:
    values = [0.0] * 20 + [0.0001 * (1.013**i) for i in range(900)]
    fine, coarse, direct = Sketch(), Sketch(level=1), Sketch(level=1)
    for number, value in enumerate(values):
        (fine if number % 3 else coarse).add(value)
        direct.add(value)
    fine.merge(coarse)
    assert (fine.level, fine.zero, fine.bins) == (1, direct.zero, direct.bins)
    # Bins twice as wide: (g^2 - 1) / (g^2 + 1) from any value, g = (1 + ALPHA) / (1 - ALPHA).
    g2 = ((1 + ALPHA) / (1 - ALPHA)) ** 2
    for q in (0.0, 0.5, 0.9, 0.99, 1.0):
        exact, got = exact_quantile(values, q), fine.quantile(q)
        assert exact is not None and got is not None
        assert abs(got - exact) <= (g2 - 1) / (g2 + 1) * exact * (1 + 1e-9), (q, got, exact)
    assert Sketch.from_json(fine.to_json()).bins == fine.bins
    assert Sketch.from_json(fine.to_json()).level == 1
    with pytest.raises(ValueError, match="cannot be made level 0"):
        fine.coarsen(0)


def test_a_p95_of_a_few_values_is_not_the_minimum() -> None:
    sketch = Sketch()
    for value in (0.010, 0.020, 0.500):
        sketch.add(value)
    p95 = sketch.quantile(0.95)
    assert p95 is not None and abs(p95 - 0.500) <= ALPHA * 0.500
    p50 = sketch.quantile(0.5)
    assert p50 is not None and abs(p50 - 0.020) <= ALPHA * 0.020
    assert Sketch().quantile(0.95) is None
    assert Sketch.from_json(sketch.to_json()).bins == sketch.bins


def test_findings_carry_the_access_logs_latency_and_5xx_share_as_evidence() -> None:
    from nginx_fleet_analyzer.engine import analyze
    from nginx_fleet_analyzer.facts import MetricsWindow

    config = parse_text(
        """
        http {
            proxy_cache_path /var/cache/nginx keys_zone=z:10m;
            server { listen 80; location / { proxy_pass http://127.0.0.1:8080; proxy_cache z; } }
        }""",
        context="main",
    )
    window = MetricsWindow(cache_hit_ratio=0.2, request_time_p95_s=0.84, share_5xx=0.031)
    (finding,) = [f for f in analyze(config, metrics=window).findings if f.rule == "C-hit-ratio"]
    assert finding.evidence["request_time_p95_s"] == 0.84
    assert finding.evidence["share_5xx"] == 0.031
    assert MetricsWindow().traffic_evidence() == {}


def test_whether_a_config_proxies_and_caches_at_all() -> None:
    from nginx_fleet_analyzer.access_logs import caches, goes_upstream

    static = parse_text("http { server { listen 80; root /srv; } }")
    proxied = parse_text("http { server { listen 80; location / { proxy_pass http://app; } } }")
    cached = parse_text(
        "http { proxy_cache_path /c keys_zone=z:1m; proxy_cache z;"
        " server { listen 80; location / { proxy_pass http://app; } } }"
    )
    switched_off = parse_text(
        "http { proxy_cache_path /c keys_zone=z:1m; proxy_cache z; server { listen 80;"
        " location / { proxy_cache off; proxy_pass http://app; } } }"
    )
    assert (goes_upstream(static), caches(static)) == (False, False)
    assert (goes_upstream(proxied), caches(proxied)) == (True, False)
    assert (goes_upstream(cached), caches(cached)) == (True, True)
    assert caches(switched_off) is False
