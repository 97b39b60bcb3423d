"""Property tests: no input, however broken, makes the parser or the engine raise."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.loader import parse_auto

# Fragments of real nginx syntax, so that generated text reaches deep parser and rule paths.
FRAGMENTS = [
    "http {",
    "server {",
    "location / {",
    "location ~ ^/x{2,3}$ {",
    "upstream app {",
    "}",
    ";",
    "events {",
    "worker_connections 768;",
    "listen 443 ssl http2;",
    "gzip on;",
    "gzip_types",
    "proxy_pass http://app;",
    "include conf.d/*.conf;",
    "content_by_lua_block {",
    "if ($x) {",
    "map $a $b {",
    "add_header X-A 1;",
    '"',
    "'",
    "\\",
    "${var}",
    "#",
    "\n",
    "# configuration file /etc/nginx/nginx.conf:\n",
    "# configuration file /etc/nginx/conf.d/a.conf:\n",
    "ssl_protocols TLSv1 TLSv1.2;",
    "proxy_cache_path /c keys_zone=z:1m max_size=10g;",
    "worker_processes",
    "keepalive_timeout 75s",
    "\x00",
    "\ufffd",
]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.text(max_size=400))
def test_arbitrary_text_is_parsed_and_analysed(text: str) -> None:
    config = parse_auto(text)
    report = analyze(config)
    assert 0 <= report.score.overall <= 100
    assert not report.failures


@SETTINGS
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(" ".join))
def test_nginx_like_fragments_are_parsed_and_analysed(text: str) -> None:
    config = parse_auto(text)
    for node in config.walk():
        # Line 0 is the stand-in http/server block around a file read alone in its context.
        assert node.line >= 1 or (config.partial and node.line == 0 and node.file == "nginx.conf")
        assert 0 <= node.start <= node.end
    report = analyze(config)
    assert 0 <= report.score.overall <= 100
    assert not report.failures
