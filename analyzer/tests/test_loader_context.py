"""Single files in their context: site files, snippets, unresolved includes, missing dump files."""

from __future__ import annotations

from pathlib import Path

import pytest
from nginx_fleet_analyzer.context import detect_context
from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.facts import HostFacts
from nginx_fleet_analyzer.findings import Finding, Severity
from nginx_fleet_analyzer.loader import parse_dump, parse_path, parse_text

SITE = """\
server {
    listen 80;
    server_name blog.example.net;
    root /var/www/blog;
    location / {
        try_files $uri $uri/ /index.php?$args;
    }
}
"""

APP_SITE = """\
upstream rails {
    server unix:/run/puma.sock fail_timeout=0;
}

server {
    listen 443 ssl;
    server_name app.example.net;
    ssl_certificate /etc/ssl/app.pem;
    ssl_certificate_key /etc/ssl/app.key;
    ssl_protocols TLSv1 TLSv1.2;
    location / {
        proxy_set_header Host $host;
        proxy_pass http://rails;
    }
}
"""

MAP_ONLY = """\
map $http_upgrade $connection_upgrade {
    default upgrade;
    ''      close;
}
"""

LOCATION_SNIPPET = """\
location ^~ /.well-known/acme-challenge/ {
    root /var/lib/letsencrypt;
    default_type text/plain;
}
location = /favicon.ico { access_log off; log_not_found off; }
"""

PROXY_SNIPPET = """\
proxy_set_header Host $host;
proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
proxy_pass http://127.0.0.1:8080;
"""

STREAM_SITE = """\
upstream dns {
    server 10.0.0.53:53;
}
server {
    listen 53 udp;
    proxy_pass dns;
    proxy_timeout 2s;
}
"""

WHOLE = """\
user www-data;
worker_processes auto;
events { worker_connections 1024; }
http {
    include mime.types;
    server { listen 80; root /srv; }
}
"""


def _rules(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SITE, "http"),
        (APP_SITE, "http"),
        (MAP_ONLY, "http"),
        ("types {\n    text/html html;\n}\n", "http"),
        (LOCATION_SNIPPET, "server"),
        ("listen 8080;\nserver_name _;\n", "server"),
        (PROXY_SNIPPET, "location"),
        (STREAM_SITE, "stream"),
        # A server with a location is an http server even next to stream-looking lines.
        (SITE.replace("    listen 80;", "    listen 80;\n    proxy_timeout 5s;"), "http"),
        (WHOLE, "main"),
        ("include /etc/nginx/modules-enabled/*.conf;\n", "main"),
        ("", "main"),
    ],
)
def test_context_is_guessed_from_the_top_level(text: str, expected: str) -> None:
    assert detect_context(parse_text(text).root) == expected
    assert parse_text(text, "x.conf", "auto").context == expected


def test_a_site_file_alone_is_read_inside_http(tmp_path: Path) -> None:
    path = tmp_path / "blog.conf"
    path.write_text(SITE)
    config = parse_path(path)
    assert config.context == "http" and config.partial and not config.from_dump
    [server] = config.servers()
    assert server.line == 1 and server.parent is config.http()
    assert config.http() is not None and config.http().line == 0  # type: ignore[union-attr]
    findings = analyze(config).findings
    assert not _rules(findings, "V-context")
    assert not [f for f in findings if f.severity == Severity.ERROR]


def test_the_same_file_read_in_main_context_is_misplaced() -> None:
    config = parse_text(SITE, "blog.conf", "main")
    assert not config.partial
    [misplaced] = _rules(analyze(config).findings, "V-context")
    assert misplaced.line == 1 and misplaced.severity == Severity.ERROR


def test_upstream_and_server_site_keeps_real_problems_at_their_severity() -> None:
    config = parse_text(APP_SITE, "app.conf", "auto")
    assert [u.args for u in config.upstreams()] == [["rails"]]
    findings = analyze(config).findings
    [protocols] = _rules(findings, "S-protocols")
    assert protocols.line == 10 and protocols.severity == Severity.ERROR
    assert "undecided" not in protocols.message


def test_map_only_file_has_no_misplaced_map() -> None:
    config = parse_text(MAP_ONLY, "upgrade.conf", "auto")
    assert config.context == "http"
    assert not _rules(analyze(config).findings, "V-context")


def test_location_snippet_is_read_inside_a_server() -> None:
    config = parse_text(LOCATION_SNIPPET, "acme.conf", "auto")
    [server] = config.servers()
    assert server.line == 0
    assert [loc.line for loc in config.locations(server)] == [1, 5]
    assert not _rules(analyze(config).findings, "V-context")


def test_directive_snippet_is_read_inside_a_location() -> None:
    config = parse_text(PROXY_SNIPPET, "proxy.conf", "auto")
    assert config.context == "location"
    [proxy_pass] = config.find("proxy_pass")
    assert proxy_pass.context == "location" and proxy_pass.parent is not None
    assert proxy_pass.parent.line == 0
    assert not _rules(analyze(config).findings, "V-context")


def test_context_can_be_named() -> None:
    config = parse_text(PROXY_SNIPPET, "proxy.conf", "server")
    assert config.context == "server"
    # proxy_pass belongs in a location: named wrongly, nginx would reject it, and so do we.
    assert _rules(analyze(config).findings, "V-context")
    with pytest.raises(ValueError, match="context must be one of"):
        parse_text(PROXY_SNIPPET, "proxy.conf", "upstream")


def test_parse_text_reads_a_whole_config_by_default() -> None:
    assert parse_text(SITE).context == "main"


def test_main_and_http_defaults_of_a_site_file_are_undecided_info() -> None:
    findings = analyze(parse_text(SITE, "blog.conf", "auto")).findings
    [gzip] = _rules(findings, "G-off")
    assert gzip.severity == Severity.INFO and "undecided" in gzip.message
    assert gzip.evidence["undecided"]
    # The workers' fd limit lives in the unseen main context: nothing is said about it.
    assert not _rules(findings, "W-nofile")


def test_the_same_defaults_in_a_whole_config_stay_warnings() -> None:
    whole = "events { worker_connections 4096; }\nhttp {\n" + SITE + "}\n"
    findings = analyze(parse_text(whole), HostFacts(worker_nofile_limit=1024)).findings
    [gzip] = _rules(findings, "G-off")
    assert gzip.severity == Severity.WARNING and "undecided" not in gzip.message
    [nofile] = _rules(findings, "W-nofile")
    assert nofile.severity == Severity.WARNING


def _unresolved(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.evidence.get("unresolved") is True]


def test_include_of_a_lone_file_is_noted_as_info_not_an_error(tmp_path: Path) -> None:
    sites = tmp_path / "sites-enabled"
    sites.mkdir()
    path = sites / "app.conf"
    path.write_text("server {\n    listen 80;\n    include snippets/headers.conf;\n}\n")
    findings = analyze(parse_path(path)).findings
    [note] = _unresolved(findings)
    assert note.rule == "V-unknown" and note.severity == Severity.INFO
    assert note.line == 3 and "not resolved" in note.message and "not analysed" in note.message
    assert not _rules(findings, "V-args")


def test_include_of_a_site_file_resolves_from_the_config_directory(tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "headers.conf").write_text("add_header X-Frame-Options DENY;\n")
    sites = tmp_path / "sites-enabled"
    sites.mkdir()
    path = sites / "app.conf"
    path.write_text("server {\n    listen 80;\n    include snippets/headers.conf;\n}\n")
    config = parse_path(path)
    assert config.unresolved == []
    [header] = config.find("add_header")
    assert header.file == str(tmp_path / "snippets" / "headers.conf")
    assert header.parent is config.servers()[0]


def test_text_from_stdin_notes_every_include() -> None:
    config = parse_text("http {\n    include conf.d/*.conf;\n}\n", "stdin")
    [note] = _unresolved(analyze(config).findings)
    assert note.severity == Severity.INFO and "only this file was given" in note.message


def test_glob_include_of_an_existing_empty_directory_is_silent(tmp_path: Path) -> None:
    (tmp_path / "conf.d").mkdir()
    main = tmp_path / "nginx.conf"
    main.write_text("events {}\nhttp {\n    include conf.d/*.conf;\n}\n")
    assert parse_path(main).unresolved == []
    main.write_text("events {}\nhttp {\n    include missing.d/*.conf;\n}\n")
    [missing] = parse_path(main).unresolved
    assert missing.reason == "no such directory"


def test_an_unresolved_include_makes_additions_to_its_block_undecided(tmp_path: Path) -> None:
    text = (
        "events {}\nhttp {\nserver {\n    listen 443 ssl;\n    server_name a.example.net;\n"
        "    ssl_certificate /c.pem;\n    ssl_certificate_key /c.key;\n"
        "    include snippets/hsts.conf;\n}\n}\n"
    )
    resolved = text.replace("    include snippets/hsts.conf;\n", "")
    unsure = _rules(analyze(parse_text(text, "nginx.conf")).findings, "S-hsts")
    sure = _rules(analyze(parse_text(resolved, "nginx.conf")).findings, "S-hsts")
    assert unsure and all("snippets/hsts.conf" in f.message for f in unsure)
    assert sure and all("undecided" not in f.message for f in sure)


DUMP_MISSING = """\
# configuration file /etc/nginx/nginx.conf:
events {}
http {
    include /etc/nginx/conf.d/app.conf;
    include /etc/nginx/sites-enabled/*;
}

"""


def test_dump_with_a_missing_include_warns_not_v_args() -> None:
    config = parse_dump(DUMP_MISSING)
    findings = analyze(config).findings
    [note] = _unresolved(findings)
    assert note.rule == "V-unknown" and note.severity == Severity.WARNING
    assert note.file == "/etc/nginx/nginx.conf" and note.line == 3
    assert "not in the dump, so what it holds is not analysed" in note.message
    assert not _rules(findings, "V-args")


def test_dump_with_every_include_present_has_no_note() -> None:
    dump = DUMP_MISSING.replace("    include /etc/nginx/conf.d/app.conf;\n", "") + (
        "# configuration file /etc/nginx/sites-enabled/default:\nserver { listen 80; }\n\n"
    )
    config = parse_dump(dump)
    assert len(config.servers()) == 1 and not config.partial
    assert _unresolved(analyze(config).findings) == []


def test_a_stream_site_file_is_read_inside_stream() -> None:
    config = parse_text(STREAM_SITE, "dns.conf", "auto")
    assert config.root[0].name == "stream" and config.root[0].line == 0
    findings = analyze(config).findings
    assert not _rules(findings, "V-context") and not _rules(findings, "V-args")
    # Read as http, its server-level proxy_pass would be misplaced.
    assert _rules(analyze(parse_text(STREAM_SITE, "dns.conf", "http")).findings, "V-context")


TLS_SITE = (
    "server {\n    listen 443 ssl;\n    server_name a.example.net;\n"
    "    ssl_certificate /c.pem;\n    ssl_certificate_key /c.key;\n}\n"
)


def test_an_inherited_setting_missing_from_a_site_file_is_undecided_wherever_anchored() -> None:
    # S-hsts anchors on the server (a real line); nginx.conf may still add the header at http.
    [alone] = _rules(analyze(parse_text(TLS_SITE, "a.conf", "auto")).findings, "S-hsts")
    assert alone.line == 1 and "undecided" in alone.message
    whole = analyze(parse_text("events {}\nhttp {\n" + TLS_SITE + "}\n")).findings
    [seen] = _rules(whole, "S-hsts")
    assert "undecided" not in seen.message


def test_a_per_location_rule_in_a_site_file_keeps_its_severity() -> None:
    text = (
        "upstream app {\n    server 127.0.0.1:3000;\n    keepalive 8;\n}\n"
        "server {\n    listen 80;\n    location / {\n        proxy_pass http://app;\n"
        "    }\n}\n"
    )
    found = _rules(analyze(parse_text(text, "app.conf", "auto")).findings, "K-upstream-http11")
    assert found and all(f.severity == Severity.WARNING for f in found)
    assert all("undecided" not in f.message for f in found)


ADMIN_SITE = """\
server {
    listen 80;
    server_name admin.example.net;
    include snippets/acl.conf;
    location /admin/ {
        allow 10.0.0.0/8;
        proxy_pass http://127.0.0.1:8080;
    }
}
"""


def test_a_block_with_its_own_access_list_is_decided_despite_an_outer_unread_include() -> None:
    # allow/deny lists are inherited all or nothing: whatever snippets/acl.conf holds at server
    # level is not in force in a location with an allow of its own.
    [open_to_all] = _rules(
        analyze(parse_text(ADMIN_SITE, "admin.conf", "auto")).findings, "X-allow-without-deny"
    )
    assert open_to_all.severity == Severity.WARNING
    assert "undecided" not in open_to_all.message and "undecided" not in open_to_all.evidence
    # The same include inside the location may add the deny: no finding is made there at all.
    inside = ADMIN_SITE.replace("    include snippets/acl.conf;\n", "").replace(
        "allow 10.0.0.0/8;\n", "allow 10.0.0.0/8;\n        include snippets/acl.conf;\n"
    )
    assert (
        _rules(analyze(parse_text(inside, "admin.conf", "auto")).findings, "X-allow-without-deny")
        == []
    )


TLS_SERVER = (
    "    server {\n        listen 443 ssl;\n        server_name a.example.net;\n"
    "        ssl_certificate /c.pem;\n        ssl_certificate_key /c.key;\n"
)


@pytest.mark.parametrize(
    ("http_include", "server_lines", "undecided"),
    [
        # The http include may add HSTS, which a server without add_header lines inherits.
        ("    include conf.d/extra.conf;\n", "", True),
        # A server with add_header lines of its own inherits none: the include cannot help.
        ("    include conf.d/extra.conf;\n", "        add_header X-Frame-Options DENY;\n", False),
        # An include in the server itself may add to the server's own list.
        (
            "",
            "        include snippets/headers.conf;\n        add_header X-Frame-Options DENY;\n",
            True,
        ),
    ],
)
def test_an_unread_include_decides_a_list_only_where_the_list_is_inherited(
    http_include: str, server_lines: str, undecided: bool
) -> None:
    text = "events {}\nhttp {\n" + http_include + TLS_SERVER + server_lines + "    }\n}\n"
    [hsts] = _rules(analyze(parse_text(text, "nginx.conf")).findings, "S-hsts")
    assert ("undecided" in hsts.message) is undecided
