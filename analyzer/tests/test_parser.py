"""The parser: positions, quoting, escapes, regex braces, raw blocks, and no crash on bad input."""

from __future__ import annotations

import random

from nginx_fleet_analyzer.loader import parse_text
from nginx_fleet_analyzer.model import Directive


def names(nodes: list[Directive]) -> list[str]:
    return [n.name for n in nodes]


def test_positions_and_spans_point_at_the_original_text() -> None:
    text = "events {}\nhttp {\n    sendfile  on;\n    server { listen 80; }\n}\n"
    config = parse_text(text, "/etc/nginx/nginx.conf")
    [sendfile] = config.find("sendfile")
    assert (sendfile.file, sendfile.line, sendfile.column) == ("/etc/nginx/nginx.conf", 3, 5)
    assert text[sendfile.start : sendfile.end] == "sendfile  on;"
    [server] = config.servers()
    assert config.text_of(server) == "server { listen 80; }"
    http = config.http()
    assert http is not None
    assert config.text_of(http).startswith("http {") and config.text_of(http).endswith("}")
    assert server.context == "http" and sendfile.parent is http
    assert config.errors == []


def test_comments_are_kept_with_positions() -> None:
    text = "# top\nworker_processes 2; # two workers\n"
    config = parse_text(text)
    comments = config.files["nginx.conf"].comments
    assert [(c.text, c.line, c.column) for c in comments] == [
        (" top", 1, 1),
        (" two workers", 2, 21),
    ]
    assert text[comments[1].start : comments[1].end] == "# two workers"


def test_quotes_and_escapes_resolve_in_args_but_raw_args_keep_the_text() -> None:
    text = 'add_header X-A "a \\"b\\" c" always;\nreturn 200 \'it\\\'s\';\nset $x a\\;b;\n'
    config = parse_text(text)
    add_header, ret, set_ = config.root
    assert add_header.args == ["X-A", 'a "b" c', "always"]
    assert add_header.raw_args[1] == '"a \\"b\\" c"'
    assert ret.args == ["200", "it's"]
    # nginx keeps unknown escapes such as \; as written, but the ';' does not end the word.
    assert set_.args == ["$x", "a\\;b"]
    assert config.errors == []


def test_variable_braces_are_not_a_block() -> None:
    config = parse_text("set $a ${host}x;\nhttp { }\n")
    assert names(config.root) == ["set", "http"]
    assert config.root[0].args == ["$a", "${host}x"]


def test_regex_location_with_braces_is_one_argument_and_flagged_for_quoting() -> None:
    config = parse_text("server {\n  location ~ ^/x{2,3}$ { return 200; }\n}\n")
    [location] = config.find("location")
    assert location.args == ["~", "^/x{2,3}$"]
    assert names(location.block or []) == ["return"]
    [error] = config.errors
    assert (error.line, error.rule) == (2, "V-args") and "quoted" in error.message


def test_quoted_regex_with_braces_is_clean() -> None:
    config = parse_text('location ~ "^/x{2,3}$" { return 200; }\n')
    assert config.root[0].args == ["~", "^/x{2,3}$"] and config.errors == []


def test_lua_block_body_is_opaque_with_balanced_braces() -> None:
    text = (
        "location / {\n  content_by_lua_block {\n    local t = {a = '}'}  -- }\n"
        "    ngx.say([[}]])\n  }\n  return 204;\n}\n"
    )
    config = parse_text(text)
    [lua] = config.find("content_by_lua_block")
    assert lua.raw_block is not None and "ngx.say([[}]])" in lua.raw_block
    assert lua.block == []
    assert names(config.root[0].block or []) == ["content_by_lua_block", "return"]
    assert config.errors == []


def test_map_and_types_entries_are_parsed_as_entries() -> None:
    text = (
        'http {\n map $uri $v {\n  default 0;\n  "~^/a" 1;\n  hostnames;\n }\n'
        " types { text/html html htm; }\n}\n"
    )
    config = parse_text(text)
    [mapping] = config.find("map")
    assert [(e.name, e.args) for e in mapping.block or []] == [
        ("default", ["0"]),
        ("~^/a", ["1"]),
        ("hostnames", []),
    ]
    [types] = config.find("types")
    assert (types.block or [])[0].args == ["html", "htm"]


def test_unbalanced_and_unterminated_input_becomes_errors_with_lines() -> None:
    config = parse_text('http {\n  server {\n    return 200 "oops;\n')
    messages = [(e.line, e.rule, e.message) for e in config.errors]
    assert any(line == 3 and "unterminated" in msg for line, _rule, msg in messages)
    assert any(rule == "V-context" and "never closed" in msg for _line, rule, msg in messages)
    assert names(config.root) == ["http"]


def test_stray_closing_brace_and_missing_semicolon() -> None:
    config = parse_text("worker_processes 2;\n}\nevents { use epoll }\n")
    found = {(e.line, e.rule) for e in config.errors}
    assert (2, "V-context") in found and (3, "V-args") in found
    assert config.find("use")[0].args == ["epoll"]


def test_binary_content_is_reported_not_raised() -> None:
    config = parse_text("events {}\n\x00\x01\x02 junk;\n")
    assert any(e.line == 2 and "binary" in e.message for e in config.errors)


def test_effective_follows_inheritance_to_the_nearest_block() -> None:
    text = "http {\n gzip on;\n server {\n  location /a { gzip off; }\n  location /b { }\n }\n}\n"
    config = parse_text(text)
    [server] = config.servers()
    loc_a, loc_b = config.locations(server)
    assert (a := config.effective("gzip", loc_a)) is not None and a.args == ["off"]
    assert (b := config.effective("gzip", loc_b)) is not None and b.args == ["on"]
    assert config.effective("sendfile", loc_b) is None


def test_random_bytes_never_raise() -> None:
    rng = random.Random(20261121)
    alphabet = " \t\n;{}#\"'\\$abc~^()"
    for _ in range(400):
        if rng.random() < 0.5:
            text = bytes(rng.randrange(256) for _ in range(rng.randrange(200))).decode(
                "utf-8", errors="replace"
            )
        else:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(200)))
        config = parse_text(text)
        for node in config.walk():
            assert 0 <= node.start <= node.end <= len(text)
            assert node.line >= 1


def test_byte_spans_count_utf8_bytes_of_non_ascii_text() -> None:
    text = "# café ☕\nworker_processes 2;\n"
    config = parse_text(text)
    directive = config.find("worker_processes")[0]
    start, end = config.files[directive.file].byte_span(directive.start, directive.end)
    raw = text.encode()
    assert raw[start:end] == b"worker_processes 2;"
    assert start == text.index("worker") + len("é☕".encode()) - 2
