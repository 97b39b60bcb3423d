"""Transfer and file rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

import re

from app.analysis.facts import HostFacts, MetricsWindow
from app.analysis.findings import Category, Finding
from app.analysis.loader import parse_text
from app.analysis.rules import RuleContext, all_rules, get_rule


def run(
    rule_id: str,
    text: str,
    facts: HostFacts | None = None,
    metrics: MetricsWindow | None = None,
) -> list[Finding]:
    """Findings of one rule on an inline config."""
    context = RuleContext(config=parse_text(text), facts=facts, metrics=metrics)
    return list(get_rule(rule_id).check(context))


STATIC = """events {}
http {
%s
    server {
        listen 80;
        root /srv/www;
        location / {
            try_files $uri $uri/ =404;
        }
    }
}
"""

PROXY_ONLY = """events {}
http {
%s
    server {
        listen 80;
        root /srv/www;
        location / {
            proxy_pass http://127.0.0.1:9000;
        }
    }
}
"""


def test_t_sendfile_fires_on_static_server_with_default() -> None:
    [finding] = run("T-sendfile", STATIC % "")
    assert (finding.severity, finding.line) == ("warning", 2)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.context) == ("add", ["on"], "http")
    assert "tcp_nopush on" in finding.fix.note


def test_t_sendfile_fires_on_explicit_off() -> None:
    [finding] = run("T-sendfile", STATIC % "    sendfile off;")
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (3, "set")


def test_t_sendfile_silent_when_on_or_only_proxying() -> None:
    assert run("T-sendfile", STATIC % "    sendfile on;") == []
    assert run("T-sendfile", PROXY_ONLY % "") == []


def test_t_nodelay_fires_on_off_and_removes_it() -> None:
    [finding] = run("T-nodelay", STATIC % "    tcp_nodelay off;")
    assert (finding.severity, finding.line) == ("info", 3)
    assert finding.fix is not None
    assert finding.fix.action == "remove"


def test_t_nodelay_silent_on_default_or_on() -> None:
    assert run("T-nodelay", STATIC % "") == []
    assert run("T-nodelay", STATIC % "    tcp_nodelay on;") == []


def test_t_open_file_cache_fires_on_static_serving() -> None:
    [finding] = run("T-open-file-cache", STATIC % "    sendfile on;")
    assert finding.line == 2
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("add", ["max=10000", "inactive=30s"])
    assert "open_file_cache_min_uses 2" in finding.fix.note
    [finding] = run("T-open-file-cache", STATIC % "    open_file_cache off;")
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (3, "set")


def test_t_open_file_cache_silent_when_set_or_not_static() -> None:
    assert run("T-open-file-cache", STATIC % "    open_file_cache max=1000;") == []
    assert run("T-open-file-cache", PROXY_ONLY % "") == []


ASSETS = """events {}
http {
    server {
        listen 80;
        root /srv/www;
        location ~* \\.(css|js|woff2|png)$ {
%s
        }
        location /api/ {
            proxy_pass http://127.0.0.1:9000;
        }
    }
}
"""


def test_t_static_expiry_fires_on_asset_location_without_caching() -> None:
    [finding] = run("T-static-expiry", ASSETS % "            access_log off;")
    assert (finding.severity, finding.line) == ("warning", 6)
    assert finding.evidence["types"] == ["css", "js", "woff2", "png"]
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args) == (
        "add",
        "expires",
        ["30d"],
    )


def test_t_static_expiry_fires_on_static_prefix() -> None:
    text = (
        "events {}\nhttp {\n    server {\n"
        "        location /static/ {\n            root /srv;\n        }\n    }\n}\n"
    )
    [finding] = run("T-static-expiry", text)
    assert finding.line == 4


def test_t_static_expiry_silent_with_expires_or_cache_control() -> None:
    assert run("T-static-expiry", ASSETS % "            expires 1y;") == []
    header = '            add_header Cache-Control "public, max-age=86400";'
    assert run("T-static-expiry", ASSETS % header) == []
    # Inherited from the server block.
    inherited = ASSETS.replace("root /srv/www;", "root /srv/www;\n        expires 7d;")
    assert run("T-static-expiry", inherited % "") == []


def test_t_static_expiry_silent_on_proxied_assets() -> None:
    text = ASSETS % "            proxy_pass http://127.0.0.1:9000;"
    assert run("T-static-expiry", text) == []


# Matches the arguments of every directive: rules must cope with directives that lack them.
WITHOUT_ARGUMENTS = re.compile(r"(?<=[a-z_0-9])( [^;{}\n]*)?(?=;|\{)")
EVERYTHING_FACTS = HostFacts(
    nginx_version=(1, 18, 0),
    cpu_count=8,
    mem_total_bytes=1024**2,
    modules=frozenset({"http_gzip_static_module", "http_v2_module"}),
    modules_known=True,
    worker_nofile_limit=10,
    somaxconn=10,
)
EVERYTHING_METRICS = MetricsWindow(
    peak_active=900,
    waiting_ratio=0.9,
    accepts_delta=100,
    handled_delta=90,
    req_per_s=5000,
    cpu_pct=90,
    listen_overflows_delta=5,
    cache_hit_ratio=0.1,
    upstream_req_per_s={"app": 900.0},
    status_2xx_get_ratio=0.95,
)


def test_transfer_rules_survive_directives_without_arguments() -> None:
    source = (STATIC % "    sendfile off;") + ASSETS % ""
    text = WITHOUT_ARGUMENTS.sub("", source)
    assert "{" in text
    checked = [r for r in all_rules() if r.category == Category.TRANSFER]
    assert checked
    for check in checked:
        for facts, metrics in ((None, None), (EVERYTHING_FACTS, EVERYTHING_METRICS)):
            for finding in run(check.id, text, facts, metrics):
                assert finding.rule == check.id
                assert finding.doc_url.startswith("https://nginx.org/en/docs/")
