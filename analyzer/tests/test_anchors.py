"""Finding keys name the block path and directive, not the line, so mutes survive edits."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from nginx_fleet_analyzer.anchors import LABEL_LIMIT, block_path, segment
from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.loader import parse_text
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.rules import Rule, RuleContext

SITE = """\
http {
    ssl_protocols TLSv1 TLSv1.2;
    server {
        listen 80;
        server_name example.com;
        return 301 https://$host$request_uri;
    }
    server {
        listen 443 ssl;
        server_name example.com www.example.com;
        location /static/ {
            autoindex on;
            if ($request_method = POST) {
                autoindex on;
            }
        }
        location ~ \\.php$ {
            add_header X-Frame-Options SAMEORIGIN;
            add_header X-Content-Type-Options nosniff;
        }
    }
    server {
        listen 8080;
        autoindex on;
    }
}
"""


def _every(name: str, rule_id: str = "T-test") -> Rule:
    """A rule with one finding at every directive called `name`."""

    def check(ctx: RuleContext) -> Iterator[Finding]:
        for node in ctx.config.find(name):
            yield probe.finding(at=node, message=f"{name} here")

    probe = Rule(rule_id, Category.TRANSFER, Severity.WARNING, check)
    return probe


def _keys(text: str, *rules: Rule) -> list[str]:
    report = analyze(parse_text(text, "/etc/nginx/nginx.conf"), rules=list(rules))
    return [f.key for f in report.findings]


def _node(config: ParsedConfig, name: str, nth: int = 0) -> Directive:
    return config.find(name)[nth]


def test_keys_name_blocks_by_what_tells_them_apart() -> None:
    keys = _keys(SITE, _every("autoindex"), _every("add_header", "X-test"))
    tls = "/etc/nginx/nginx.conf:http/server[example.com listen 443]"
    assert keys == [
        f"T-test@{tls}/location[/static/]/autoindex",
        f"T-test@{tls}/location[/static/]/if[$request_method = POST]/autoindex",
        f"X-test@{tls}/location[~ \\.php$]/add_header[X-Frame-Options]",
        f"X-test@{tls}/location[~ \\.php$]/add_header[X-Content-Type-Options]",
        "T-test@/etc/nginx/nginx.conf:http/server[listen 8080]/autoindex",
    ]


def test_the_finding_carries_place_and_directive_in_its_json() -> None:
    [finding] = analyze(
        parse_text(SITE, "/etc/nginx/nginx.conf"), rules=[_every("ssl_protocols")]
    ).findings
    data = finding.to_dict()
    assert (data["place"], data["directive"], data["line"]) == ("http", "ssl_protocols", 2)
    assert data["key"] == "T-test@/etc/nginx/nginx.conf:http/ssl_protocols"


def test_lines_inserted_above_or_in_the_block_keep_the_keys() -> None:
    rules = (_every("autoindex"), _every("add_header", "X-test"))
    before = _keys(SITE, *rules)
    above = "# managed by ops\nworker_processes 2;\n\n" + SITE
    in_block = SITE.replace(
        "        location /static/ {\n",
        "        location /static/ {\n            expires 7d;\n            access_log off;\n",
    )
    lines_before = [f.line for f in analyze(parse_text(SITE), rules=list(rules)).findings]
    lines_after = [f.line for f in analyze(parse_text(above), rules=list(rules)).findings]
    assert lines_before != lines_after
    assert _keys(above, *rules) == before
    assert _keys(in_block, *rules) == before


def test_moving_the_directive_to_another_block_changes_its_key() -> None:
    before = set(_keys(SITE, _every("autoindex")))
    moved = SITE.replace(
        "        location /static/ {\n            autoindex on;\n",
        "        location /files/ {\n            autoindex on;\n",
    )
    after = set(_keys(moved, _every("autoindex")))
    assert len(before - after) == 2 and len(after - before) == 2


def test_renaming_the_server_changes_its_key() -> None:
    renamed = SITE.replace("server_name example.com www.example.com;", "server_name other.org;")
    keys = _keys(renamed, _every("autoindex"))
    assert keys[0] == (
        "T-test@/etc/nginx/nginx.conf:http/server[other.org]/location[/static/]/autoindex"
    )
    assert keys[-1] == _keys(SITE, _every("autoindex"))[-1]


def test_alike_siblings_get_ordinals_in_document_order() -> None:
    text = "http {\n" + "server { listen 80; server_name a; autoindex on; }\n" * 3 + "}\n"
    assert _keys(text, _every("autoindex")) == [
        f"T-test@/etc/nginx/nginx.conf:http/server[a listen 80]{suffix}/autoindex"
        for suffix in ("", "#2", "#3")
    ]


def test_two_findings_about_one_directive_get_distinct_keys() -> None:
    def twice(ctx: RuleContext) -> Iterable[Finding]:
        for node in ctx.config.find("gzip"):
            yield double.finding(at=node, message="first")
            yield double.finding(at=node, message="second")

    double = Rule("G-twice", Category.COMPRESSION, Severity.INFO, twice)
    report = analyze(parse_text("http { gzip on; }\n", "/n.conf"), rules=[double])
    assert [(f.key, f.message) for f in report.findings] == [
        ("G-twice@/n.conf:http/gzip", "first"),
        ("G-twice@/n.conf:http/gzip~2", "second"),
    ]


def test_a_finding_without_a_directive_has_a_key_without_its_line() -> None:
    def bare(_ctx: RuleContext) -> Iterable[Finding]:
        yield lone.finding(file="/n.conf", line=7, message="somewhere")

    lone = Rule("V-bare", Category.VALIDITY, Severity.ERROR, bare)
    [finding] = analyze(parse_text("events {}\n"), rules=[lone]).findings
    assert (finding.key, finding.line, finding.place) == ("V-bare@/n.conf", 7, "")


def test_a_block_anchor_is_named_by_its_own_segment() -> None:
    config = parse_text(SITE)
    php = next(n for n in config.find("location") if n.args[0] == "~")
    assert (block_path(php), segment(php)) == (
        "http/server[example.com listen 443]",
        "location[~ \\.php$]",
    )
    assert block_path(config.root[0]) == "" and segment(config.root[0]) == "http"


def test_long_labels_are_cut_but_stay_distinct() -> None:
    long_a, long_b = "/" + "a" * 200 + "/x/", "/" + "a" * 200 + "/y/"
    config = parse_text(f"http {{ server {{ location {long_a} {{ }} location {long_b} {{ }} }} }}")
    first, second = (segment(node) for node in config.find("location"))
    assert first != second and len(first) <= len("location[]") + LABEL_LIMIT


def test_segments_are_the_same_inside_and_outside_an_analysis() -> None:
    config = parse_text(SITE)
    outside = [block_path(node) for node in config.find("autoindex")]
    inside = [f.place for f in analyze(config, rules=[_every("autoindex")]).findings]
    assert inside == outside
