"""The directive table: contexts, argument forms, versions and documentation links."""

from __future__ import annotations

from nginx_fleet_analyzer.arguments import argument_problem, arity_ok
from nginx_fleet_analyzer.directives import context_code, doc_url, matching_spec, specs, table
from nginx_fleet_analyzer.loader import parse_text


def test_newer_directives_are_known_with_their_versions() -> None:
    expected = {
        "http2": (1, 25, 1),
        "keepalive_time": (1, 19, 10),
        "http3": (1, 25, 0),
        "quic_retry": (1, 25, 0),
        "ssl_reject_handshake": (1, 19, 4),
        "ssl_conf_command": (1, 19, 4),
        "proxy_ssl_conf_command": (1, 19, 4),
    }
    for name, version in expected.items():
        assert specs(name)[0].since == version, name


def test_every_row_uses_known_forms_and_context_codes() -> None:
    codes = set(
        [
            "main",
            "events",
            "http",
            "srv",
            "loc",
            "ups",
            "sif",
            "lif",
            "lmt",
            "stream",
            "ssrv",
            "sups",
            "mail",
            "msrv",
            "rtmp",
            "rsrv",
            "rapp",
            "rrec",
            "*",
        ]
    )
    for name, rows in table().items():
        for row in rows:
            assert set(row.contexts.split()) <= codes, name
            assert row.args in ("flag", "*") or row.args.rstrip("+").isdigit(), name


def test_same_name_resolves_by_context() -> None:
    config = parse_text(
        "http { server { location / { proxy_pass http://a; } } }\n"
        "stream { server { proxy_pass 127.0.0.1:1; } upstream u { server 127.0.0.1:2; } }\n"
    )
    http_pass, stream_pass = config.find("proxy_pass")
    assert context_code(http_pass) == "loc" and context_code(stream_pass) == "ssrv"
    assert (spec := matching_spec(stream_pass)) is not None and spec.module == "stream_proxy_module"
    [member] = [s for s in config.find("server") if s.block is None]
    assert context_code(member) == "sups"


def test_argument_forms() -> None:
    assert arity_ok("12", 2) and not arity_ok("12", 3) and arity_ok("2+", 5)
    assert not arity_ok("flag", 0)
    [spec] = specs("worker_processes")
    assert argument_problem(spec, "worker_processes", ["auto"]) is None
    assert argument_problem(spec, "worker_processes", ["many"]) is not None


def test_doc_links_point_at_the_module_page_anchor() -> None:
    assert (
        doc_url("sendfile") == "https://nginx.org/en/docs/http/ngx_http_core_module.html#sendfile"
    )
    assert doc_url("keepalive").endswith("http/ngx_http_upstream_module.html#keepalive")
    assert doc_url("http2").endswith("http/ngx_http_v2_module.html#http2")
    assert doc_url("no_such_thing") == ""


def test_so_files_read_from_the_raw_rows_match_the_parsed_table() -> None:
    """The cheap .so scan (last field of each raw row) agrees with every parsed row."""
    from nginx_fleet_analyzer import directive_data
    from nginx_fleet_analyzer.directives import so_files

    parsed = {so for rows in table().values() for row in rows for so in row.so}
    assert parsed | {name for name, _package in directive_data.SO_NAMES} == so_files()
    assert "ngx_http_brotli_filter_module.so" in so_files()
