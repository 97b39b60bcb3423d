"""stub_status: parsing, discovery from a real `nginx -T`, and reading a live nginx."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from nginx_fleet_agent.collectors.nginx_config import snapshot_from_dump
from nginx_fleet_agent.collectors.stub_status import (
    NO_LOCATION_ERROR,
    StubStatusCollector,
    StubStatusParseError,
    StubStatusTarget,
    discover_target,
    parse_stub_status,
)
from nginx_fleet_agent.nginx_command import NginxCommand
from nginx_fleet_agent.nginx_syntax import parse

from tests.nginx_instance import PLAIN_SERVER, NginxInstance

PAGE = (
    "Active connections: 3 \n"
    "server accepts handled requests\n"
    " 1200 1190 5400 \n"
    "Reading: 0 Writing: 1 Waiting: 2 \n"
)


def test_parse_reads_every_counter() -> None:
    assert parse_stub_status(PAGE) == {
        "active": 3,
        "reading": 0,
        "writing": 1,
        "waiting": 2,
        "accepts": 1200,
        "handled": 1190,
        "requests": 5400,
    }


@pytest.mark.parametrize(
    "text",
    ["", "<html>404</html>", PAGE.replace("Waiting: 2", "Waiting: x"), PAGE + "extra line\n"],
)
def test_parse_rejects_other_pages(text: str) -> None:
    with pytest.raises(StubStatusParseError):
        parse_stub_status(text)


def _tree(conf: str) -> StubStatusTarget | None:
    return discover_target(parse(conf))


@pytest.mark.parametrize(
    ("listen", "url"),
    [
        ("8080", "http://127.0.0.1:8080/s"),
        ("*:8081", "http://127.0.0.1:8081/s"),
        ("0.0.0.0:8082", "http://127.0.0.1:8082/s"),
        ("127.0.0.2:8083", "http://127.0.0.2:8083/s"),
        ("[::1]:8084", "http://[::1]:8084/s"),
        ("[::]:8085", "http://[::1]:8085/s"),
        ("localhost:8086", "http://127.0.0.1:8086/s"),
        ("127.0.0.1", "http://127.0.0.1:80/s"),
        ("8443 ssl", "https://127.0.0.1:8443/s"),
    ],
)
def test_discovery_builds_url_from_listen(listen: str, url: str) -> None:
    conf = f"http {{ server {{ listen {listen}; location = /s {{ stub_status; }} }} }}"
    assert _tree(conf) == StubStatusTarget(url)


def test_discovery_skips_public_addresses_and_regex_locations() -> None:
    conf = """
    http {
        server { listen 192.0.2.10:80; location /a { stub_status; } }
        server { listen 127.0.0.1:81; location ~ ^/b { stub_status; } }
        server { listen 127.0.0.1:82; listen unix:/tmp/x.sock;
                 server_name status.local *.wild;
                 location / { location /nested/status { stub_status on; } } }
    }
    """
    assert _tree(conf) == StubStatusTarget("http://127.0.0.1:82/nested/status", "status.local")


def test_discovery_prefers_plain_http_port() -> None:
    conf = "http { server { listen 443 ssl; listen 8080; location /st { stub_status; } } }"
    assert _tree(conf) == StubStatusTarget("http://127.0.0.1:8080/st")


def test_discovery_from_real_nginx_dump(nginx: NginxInstance) -> None:
    dump = NginxCommand(args=nginx.args).run("-T").stdout
    target = discover_target(snapshot_from_dump(dump).tree)
    assert target == StubStatusTarget(f"{nginx.base_url}/nginx_status", "status.test")


def test_counters_move_after_requests(nginx: NginxInstance) -> None:
    collector = StubStatusCollector(f"{nginx.base_url}/nginx_status")
    try:
        before = collector.collect()["stub_status"]
        with httpx.Client(trust_env=False) as client:
            for _ in range(5):
                assert client.get(nginx.base_url + "/").status_code == 200
        after = collector.collect()["stub_status"]
    finally:
        collector.close()
    assert before["available"] and after["available"]
    assert before["error"] is None
    # 5 requests plus the second status request itself.
    assert after["requests"] - before["requests"] == 6
    assert after["accepts"] > before["accepts"]
    assert after["handled"] == after["accepts"]
    assert after["writing"] >= 1  # the status request counts as a Writing connection
    assert after["active"] == after["reading"] + after["writing"] + after["waiting"]


def test_missing_location_reports_reason(
    nginx_factory: Callable[..., NginxInstance],
) -> None:
    instance = nginx_factory(PLAIN_SERVER)
    collector = StubStatusCollector(None)
    try:
        dump = NginxCommand(args=instance.args).run("-T").stdout
        collector.use_config(snapshot_from_dump(dump).tree)
        result = collector.collect()["stub_status"]
    finally:
        collector.close()
    assert result == {"available": False, "url": None, "error": NO_LOCATION_ERROR}


def test_non_status_page_and_refused_port(nginx: NginxInstance) -> None:
    wrong_page = StubStatusCollector(f"{nginx.base_url}/")
    try:
        page_result = wrong_page.collect()["stub_status"]
    finally:
        wrong_page.close()
    assert page_result["available"] is False
    assert page_result["error"] == "response is not a stub_status page"
    assert "accepts" not in page_result
    nginx.stop()
    refused = StubStatusCollector(f"{nginx.base_url}/nginx_status")
    try:
        refused_result = refused.collect()["stub_status"]
    finally:
        refused.close()
    assert refused_result["available"] is False
    assert refused_result["error"] == "connection refused"


def test_http_error_status_is_reported(nginx_factory: Callable[..., NginxInstance]) -> None:
    denied = """
    server {
        listen 127.0.0.1:{port};
        location = /nginx_status { stub_status; deny all; }
    }
    """
    instance = nginx_factory(denied)
    collector = StubStatusCollector(f"{instance.base_url}/nginx_status")
    try:
        result = collector.collect()["stub_status"]
    finally:
        collector.close()
    assert result == {
        "available": False,
        "url": f"{instance.base_url}/nginx_status",
        "error": "HTTP 403",
    }
