"""Checked patches from findings: minimal text edits, the self-check, and nginx's own verdict."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from nginx_fleet_analyzer import parse_dump
from nginx_fleet_analyzer.dump import split_dump
from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.remedy import apply_ops, propose, recommend, sha256_text

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MAIN = "/etc/nginx/nginx.conf"
# A Debian-style main file with tabs in one block, a comment after a value, a one-line location.
CONF = """\
user www-data;
worker_processes auto;
pid /run/nginx.pid;

events {
\tworker_connections 768;
}

http {
    sendfile on;
    gzip off;   # turned off while debugging
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /var/log/nginx/access.log;

    server {
        listen 8080;
        server_name shop.example.com;
        root /srv/shop;
        location / {
            try_files $uri $uri/ =404;
        }
        location /static/ { expires 1h; }
    }
}"""
MIME = "types {\n    text/html html;\n    text/css css;\n    application/javascript js;\n}"


def dump(conf: str = CONF) -> str:
    """The `nginx -T` text of the two files."""
    mime = f"# configuration file /etc/nginx/mime.types:\n{MIME}\n"
    return f"# configuration file {MAIN}:\n{conf}\n{mime}"


def key_of(rule: str, text: str | None = None) -> str:
    """The key of the rule's (first) finding in the dump."""
    report = analyze(parse_dump(text or dump()))
    return next(f.key for f in report.findings if f.rule == rule)


def test_setting_a_value_rewrites_only_the_directive_and_keeps_its_comment() -> None:
    proposal = propose(dump(), [key_of("G-off")]).to_dict()
    assert proposal["ok"], proposal["reason"]
    (patch,) = proposal["files"]
    assert patch["path"] == MAIN
    assert patch["ops"] == [
        {
            "start": 11,
            "count": 1,
            "old": ["    gzip off;   # turned off while debugging"],
            "new": ["    gzip on;   # turned off while debugging"],
        }
    ]
    assert patch["base_sha256"] == sha256_text(CONF)
    assert patch["new_sha256"] == sha256_text(apply_ops(CONF, patch["ops"]))
    assert proposal["resolved"] == proposal["keys"]
    assert "-    gzip off;" in proposal["diff"] and "+    gzip on;" in proposal["diff"]
    assert proposal["diff"].startswith(f"--- a{MAIN}\n+++ b{MAIN}\n")


def test_an_added_directive_takes_the_indentation_of_its_block() -> None:
    tabbed = propose(dump(), [key_of("W-connections")]).to_dict()
    assert tabbed["ok"], tabbed["reason"]
    added = propose(dump(), [key_of("X-tokens")]).to_dict()
    assert added["ok"], added["reason"]
    (op,) = added["files"][0]["ops"]
    assert op["count"] == 0 and op["start"] == 10  # first line of the http block
    assert op["new"] == ["    server_tokens off;"]


def test_fixes_of_several_findings_make_one_patch_in_one_file() -> None:
    keys = [key_of("G-off"), key_of("X-tokens")]
    proposal = propose(dump(), keys).to_dict()
    assert proposal["ok"], proposal["reason"]
    assert sorted(proposal["resolved"]) == sorted(keys)
    assert [e["id"] for e in proposal["edits"]] == ["e1", "e2"]
    assert len(proposal["files"]) == 1 and len(proposal["files"][0]["ops"]) == 2


def test_an_operator_value_is_checked_again() -> None:
    key = key_of("W-connections")
    good = propose(dump(), [key], overrides={"e1": ["2048"]}).to_dict()
    assert good["ok"] and "+\tworker_connections 2048;" in good["diff"]
    bad = propose(dump(), [key], overrides={"e1": ["lots"]}).to_dict()
    assert not bad["ok"] and bad["reason"].startswith("introduces V-args")
    assert propose(dump(), [key], overrides={"e7": ["1"]}).to_dict()["reason"] == (
        "no edit e7 to adjust"
    )


def test_stale_and_manual_findings_get_no_diff() -> None:
    stale = propose(dump(), ["G-off@/etc/nginx/nginx.conf:http/server/gzip"]).to_dict()
    assert not stale["ok"] and "stale" in stale["reason"] and stale["files"] == []


def test_a_secret_marker_is_never_written() -> None:
    proposal = propose(dump(), [key_of("W-connections")], overrides={"e1": ["[redacted]"]})
    assert not proposal.ok and "cannot be written" in proposal.to_dict()["reason"]


def test_a_crlf_file_stays_crlf() -> None:
    crlf = CONF.replace("\n", "\r\n")
    proposal = propose(dump(crlf), [key_of("G-off", dump(crlf))]).to_dict()
    assert proposal["ok"], proposal["reason"]
    patched = apply_ops(crlf, proposal["files"][0]["ops"])
    assert "    gzip on;   # turned off while debugging\r\n" in patched
    assert patched.count("\r\n") == crlf.count("\r\n")
    assert sha256_text(patched) == proposal["files"][0]["new_sha256"]


@pytest.mark.skipif(not Path(NGINX).exists(), reason="needs nginx")
def test_nginx_accepts_every_offered_patch(tmp_path: Path) -> None:
    """Every ok proposal of the sample config, written to disk, passes the real `nginx -t`."""
    conf = CONF.replace("/etc/nginx/mime.types", str(tmp_path / "mime.types"))
    conf = conf.replace("/run/nginx.pid", str(tmp_path / "nginx.pid")).replace(
        "user www-data;\n", ""
    )
    conf = conf.replace("/var/log/nginx/", f"{tmp_path}/")
    text = (
        f"# configuration file {tmp_path}/nginx.conf:\n{conf}\n"
        f"# configuration file {tmp_path}/mime.types:\n{MIME}\n"
    )
    (tmp_path / "mime.types").write_text(MIME)
    report = analyze(parse_dump(text))
    offered = 0
    for finding in report.findings:
        if finding.fix is None or finding.fix.action not in ("set", "add", "remove"):
            continue
        proposal = propose(text, [finding.key]).to_dict()
        if not proposal["ok"]:
            continue
        offered += 1
        files = dict(split_dump(text))
        for patch in proposal["files"]:
            files[patch["path"]] = apply_ops(files[patch["path"]], patch["ops"])
        for path, body in files.items():
            Path(path).write_text(body)
        result = subprocess.run(
            [NGINX, "-t", "-p", str(tmp_path), "-c", f"{tmp_path}/nginx.conf",
             "-g", f"error_log {tmp_path}/error.log;"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert result.returncode == 0, (finding.key, proposal["diff"], result.stderr)
    assert offered >= 4


def test_a_fix_with_companions_is_one_patch_of_every_edit() -> None:
    """sendfile on comes with tcp_nopush on, in the same block, in one diff."""
    text = dump(CONF.replace("    sendfile on;", "    sendfile off;"))
    proposal = propose(text, [key_of("T-sendfile", text)]).to_dict()
    assert proposal["ok"], proposal["reason"]
    assert [(e["id"], e["directive"], e["args"]) for e in proposal["edits"]] == [
        ("e1", "sendfile", ["on"]),
        ("e2", "tcp_nopush", ["on"]),
    ]
    assert "-    sendfile off;" in proposal["diff"]
    assert "+    sendfile on;" in proposal["diff"] and "+    tcp_nopush on;" in proposal["diff"]
    # Lines added at one place read in the edits' order.
    text = dump(CONF.replace("    sendfile on;\n", ""))
    added = propose(text, [key_of("T-sendfile", text)]).to_dict()
    assert "+    sendfile on;\n+    tcp_nopush on;\n" in added["diff"]


def test_a_misplaced_directive_is_moved_to_the_block_that_allows_it() -> None:
    """ssl_protocols inside a location goes up to its server: removed there, added here."""
    placed = CONF.replace(
        "            try_files $uri $uri/ =404;\n",
        "            try_files $uri $uri/ =404;\n            ssl_protocols TLSv1.2 TLSv1.3;\n",
    )
    text = dump(placed)
    proposal = propose(text, [key_of("V-context", text)]).to_dict()
    assert proposal["ok"], proposal["reason"]
    assert [(e["action"], e["context"]) for e in proposal["edits"]] == [
        ("remove", "location /"),
        ("add", "server shop.example.com"),
    ]
    patched = apply_ops(placed, proposal["files"][0]["ops"])
    assert "        ssl_protocols TLSv1.2 TLSv1.3;\n        listen 8080;" in patched
    assert patched.count("ssl_protocols") == 1


def test_a_directive_is_replaced_by_another_in_its_line() -> None:
    """add_header Content-Type becomes default_type, the comment after it kept."""
    text = dump(
        CONF.replace(
            "location /static/ { expires 1h; }",
            "location /api/ {\n            add_header Content-Type application/json;  # API\n"
            "            proxy_pass http://127.0.0.1:9000;\n        }",
        )
    )
    proposal = propose(text, [key_of("X-add-header-content-type", text)]).to_dict()
    assert proposal["ok"], proposal["reason"]
    assert "+            default_type application/json;  # API" in proposal["diff"]


def test_a_map_entry_with_an_empty_key_stays_quoted() -> None:
    """The websocket map's '' close entry becomes '' '' (nginx refuses a bare value)."""
    pooled = CONF.replace(
        "    server {",
        "    map $http_upgrade $connection_upgrade {\n        default upgrade;\n"
        "        ''      close;\n    }\n    upstream app {\n        server 127.0.0.1:9000;\n"
        "        keepalive 8;\n    }\n    server {",
        1,
    ).replace(
        "            try_files $uri $uri/ =404;\n",
        "            proxy_http_version 1.1;\n"
        "            proxy_set_header Upgrade $http_upgrade;\n"
        "            proxy_set_header Connection $connection_upgrade;\n"
        "            proxy_pass http://app;\n",
    )
    text = dump(pooled)
    proposal = propose(text, [key_of("K-upstream-http11", text)]).to_dict()
    assert proposal["ok"], proposal["reason"]
    assert "+        '' '';" in proposal["diff"]


def test_a_value_set_to_what_the_finding_complains_of_is_no_fix() -> None:
    """K-reset with the operator's `off`: the finding moves to the new line, it is not gone."""
    key = key_of("K-reset")
    assert propose(dump(), [key]).ok
    kept = propose(dump(), [key], overrides={"e1": ["off"]}).to_dict()
    assert not kept["ok"]
    assert kept["reason"].startswith("K-reset is still reported after the patch (now at ")


def test_recommend_reuses_a_given_analysis_to_the_same_result() -> None:
    config = parse_dump(dump())
    listed = [p.to_dict() for p in recommend(dump(), analysed=(config, analyze(config)))]
    assert listed == [p.to_dict() for p in recommend(dump())]
    assert listed and all(p["ok"] for p in listed if p["keys"][0].startswith("G-off"))
