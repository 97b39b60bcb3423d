"""Line formats and interval aggregates on lines written as nginx writes them."""

from __future__ import annotations

from nginx_fleet_agent.access_log.aggregate import (
    MAX_SITES,
    OTHER,
    IntervalStats,
    Memo,
    collapse_path,
    upstream_attempts,
)
from nginx_fleet_agent.access_log.line_format import LineParser
from nginx_fleet_analyzer.access_logs import COMBINED_FORMAT, LogFormat


def aggregate(fmt: LogFormat, text: bytes, *, top_paths: int = 0) -> dict[str, object]:
    parser = LineParser(fmt, with_paths=top_paths > 0)
    stats = IntervalStats(Memo(), top_paths=top_paths)
    stats.add_rows(parser.parse(text), parser.positions, "/var/log/nginx/access.log")
    return stats.to_json()


def test_combined_lines_count_by_file_with_statuses_bytes_and_get_2xx() -> None:
    lines = (
        b'192.0.2.1 - - [25/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8"\n'
        b'192.0.2.1 - bob [25/Nov/2026:10:00:01 +0000] "POST /login HTTP/1.1" 302 0 "-" "x y"\n'
        # A TLS handshake sent to a plain-HTTP port: nginx logs the escaped bytes, status 400.
        b'192.0.2.9 - - [25/Nov/2026:10:00:02 +0000] "\\x16\\x03\\x01\\x00" 400 157 "-" "-"\n'
        b'192.0.2.1 - - [25/Nov/2026:10:00:03 +0000] "HEAD /x HTTP/1.1" 499 0 "-" "-"\n'
    )
    (site,) = aggregate(LogFormat("combined", "default", COMBINED_FORMAT), lines)["sites"]  # type: ignore[misc]
    assert site["site"] == "/var/log/nginx/access.log"
    assert site["requests"] == 4
    assert site["status"]["2xx"] == 1 and site["status"]["3xx"] == 1
    assert site["status"]["4xx"] == 2 and site["status"]["499"] == 1
    assert site["bytes_sent"] == 612 + 157
    assert site["get_2xx"] == 1
    # combined has no cache status and no timings: absent, never zero.
    assert "cache" not in site and "request_time" not in site


def test_braced_variables_escape_none_and_values_with_spaces() -> None:
    fmt = LogFormat("raw", "none", '${host} "$http_user_agent" ${status} $request_time')
    lines = b'A.test "agent "with" quotes" 200 0.010\nb.test "-" 503 1.250\n'
    sites = {s["site"]: s for s in aggregate(fmt, lines)["sites"]}  # type: ignore[attr-defined]
    assert set(sites) == {"a.test", "b.test"}
    assert sites["b.test"]["status"]["503"] == 1
    assert sites["a.test"]["request_time"]["bins"]


def test_upstream_lists_split_attempts_and_internal_redirect_groups() -> None:
    total, attempts = upstream_attempts(
        b"0.001, 0.250 : 0.010", b"10.0.0.1:80, 10.0.0.2:80 : 10.0.0.3:80", b"502, 200 : 200", 200
    )
    assert total == b"0.261"
    assert [(a, failed) for a, _, _, failed in attempts] == [
        ("10.0.0.1:80", True),
        ("10.0.0.2:80", False),
        ("10.0.0.3:80", False),
    ]
    # Without $upstream_status: a retried attempt failed, and so did the last one of a 504.
    _, attempts = upstream_attempts(b"1.000, 60.001", b"10.0.0.1:80, 10.0.0.2:80", b"", 504)
    assert [failed for *_, failed in attempts] == [True, True]
    assert upstream_attempts(b"-", b"-", b"-", 200) == (None, [])


def test_top_paths_drop_queries_and_collapse_ids() -> None:
    assert collapse_path(b"/api/items/12345?token=abc") == "/api/items/:id"
    assert collapse_path(b"/u/3f2a1c4e-9b7d-4c1e-8f00-1234567890ab/avatar") == "/u/:id/avatar"
    assert (
        collapse_path(b"/static/app.0123456789abcdef0123.js")
        == "/static/app.0123456789abcdef0123.js"
    )
    assert collapse_path(b"/s/AbCdEfGhIjKlMnOp1234") == "/s/:id"
    fmt = LogFormat("t", "default", '"$request" $status $request_time')
    lines = (
        b"".join(
            f'"GET /api/items/{n}?q={n} HTTP/1.1" 200 0.{n % 9}00\n'.encode() for n in range(30)
        )
        + b'"GET /health HTTP/1.1" 200 0.000\n'
    )
    paths = {p["path"]: p for p in aggregate(fmt, lines, top_paths=5)["top_paths"]}  # type: ignore[attr-defined]
    assert paths["/api/items/:id"]["requests"] == 30
    assert paths["/api/items/:id"]["time_max"] == 0.8
    assert paths["/health"]["requests"] == 1
    # Off by default: no paths leave the host.
    assert "top_paths" not in aggregate(fmt, lines)


def test_sites_beyond_the_bound_are_summed_into_other() -> None:
    fmt = LogFormat("h", "default", "$host $status")
    lines = b"".join(f"site{n}.test 200\n".encode() for n in range(MAX_SITES + 50))
    sites = {s["site"]: s for s in aggregate(fmt, lines)["sites"]}  # type: ignore[attr-defined]
    assert len(sites) == MAX_SITES + 1
    assert sites[OTHER]["requests"] == 50


def test_a_json_format_reads_numbers_and_strings_and_skips_broken_lines() -> None:
    fmt = LogFormat(
        "j",
        "json",
        '{"h":"$host","s":$status,"rt":$request_time,"cs":"$upstream_cache_status","r":"$request"}',
    )
    parser = LineParser(fmt)
    chunk = (
        b'{"h":"a.test","s":200,"rt":0.004,"cs":"HIT","r":"GET /a?b HTTP/1.1"}\n'
        b'{"h":"a.test","s":404,"rt":0.000,"cs":"","r":"GET /b HTTP/1.1"}\n'
        b"not json at all\n"
    )
    rows = parser.parse(chunk)
    assert len(rows) == 2
    stats = IntervalStats(Memo())
    stats.add_rows(rows, parser.positions, "f")
    (site,) = stats.to_json()["sites"]
    assert site["cache"]["HIT"] == 1 and sum(site["cache"].values()) == 1
    assert site["get_2xx"] == 1 and site["request_time"]["zero"] == 1


def test_values_a_json_format_left_empty_or_wrong_never_break_the_interval() -> None:
    fmt = LogFormat("j", "json", '{"s":"$status","b":"$body_bytes_sent","rt":"$request_time"}')
    parser = LineParser(fmt)
    rows = parser.parse(
        b'{"s":"","b":"","rt":""}\n{"s":"abc","b":"1","rt":"0.1"}\n{"s":"204","b":"0","rt":"x"}\n'
        b'{"s":"200","b":"10","rt":"0.250"}\n'
    )
    assert len(rows) == 2  # a status of "abc" or a time of "x" is not a line of this format
    stats = IntervalStats(Memo())
    stats.add_rows(rows, parser.positions, "f")
    (site,) = stats.to_json()["sites"]
    assert site["requests"] == 2 and site["status"]["2xx"] == 1 and site["bytes_sent"] == 10


def test_names_from_request_headers_are_bounded_printable_text() -> None:
    # escape=none writes the Host header as the client sent it.
    fmt = LogFormat("raw", "none", "$http_host $status")
    lines = b"evil\x00\x1b[31m.test 200\n" + b"h" * 400 + b".test 200\n"
    sites = [s["site"] for s in aggregate(fmt, lines)["sites"]]  # type: ignore[attr-defined]
    assert sites[0] == "evil??[31m.test"
    assert len(sites[1]) == 255
