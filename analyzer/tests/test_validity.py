"""Validity rules: each fires on its real case and stays silent on a look-alike."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import HostFacts
from nginx_fleet_analyzer.findings import Finding
from nginx_fleet_analyzer.loader import parse_dump, parse_text
from nginx_fleet_analyzer.model import ParsedConfig
from nginx_fleet_analyzer.rules import RuleContext, get_rule

OLD = HostFacts(nginx_version=(1, 22, 1))
NEW = HostFacts(nginx_version=(1, 25, 3))


def run(rule_id: str, config: ParsedConfig | str, facts: HostFacts | None = None) -> list[Finding]:
    parsed = parse_text(config) if isinstance(config, str) else config
    return list(get_rule(rule_id).check(RuleContext(config=parsed, facts=facts)))


def test_context_worker_processes_inside_events() -> None:
    [finding] = run("V-context", "events {\n  worker_processes 4;\n}\n")
    assert (finding.line, finding.severity) == (2, "error")
    assert "events block" in finding.message and "main context" in finding.message
    assert finding.fix is not None and finding.fix.action == "remove"
    assert finding.doc_url.endswith("ngx_core_module.html#worker_processes")


def test_context_worker_processes_at_main_is_silent() -> None:
    assert run("V-context", "worker_processes 4;\nevents { worker_connections 1024; }\n") == []


def test_context_if_in_http_fires_but_if_in_server_does_not() -> None:
    [finding] = run("V-context", "http {\n  if ($a) { return 403; }\n}\n")
    assert finding.line == 2 and finding.message.startswith('"if" is not allowed in the http')
    assert run("V-context", "http { server { if ($a) { return 403; } } }\n") == []


def test_context_included_file_that_opens_http() -> None:
    dump = (
        "# configuration file /etc/nginx/nginx.conf:\nevents {}\nhttp {\n"
        "    include conf.d/*.conf;\n}\n\n"
        "# configuration file /etc/nginx/conf.d/site.conf:\n"
        "http {\n    server { listen 80; }\n}\n\n"
    )
    [finding] = run("V-context", parse_dump(dump))
    assert (finding.file, finding.line) == ("/etc/nginx/conf.d/site.conf", 1)
    assert "include at /etc/nginx/nginx.conf:3" in finding.message
    assert finding.fix is not None and "extra" in finding.fix.note


def test_context_included_server_file_is_silent() -> None:
    dump = (
        "# configuration file /etc/nginx/nginx.conf:\nevents {}\nhttp {\n"
        "    include conf.d/*.conf;\n}\n\n"
        "# configuration file /etc/nginx/conf.d/site.conf:\nserver { listen 80; }\n\n"
    )
    assert run("V-context", parse_dump(dump)) == []


def test_context_reports_unbalanced_braces() -> None:
    [finding] = run("V-context", "http {\n  server {\n}\n")
    assert finding.line == 1 and "never closed" in finding.message


def test_args_wrong_count_and_wrong_flag() -> None:
    findings = run("V-args", "http {\n  sendfile yes;\n  keepalive_timeout 1 2 3;\n}\n")
    assert [(f.line, f.rule) for f in findings] == [(2, "V-args"), (3, "V-args")]
    assert '"on" or "off"' in findings[0].message and "has 3" in findings[1].message


def test_args_sizes_and_times_accept_units_and_variables() -> None:
    text = (
        "http {\n  client_max_body_size 10m;\n  keepalive_timeout 30s 25;\n"
        "  send_timeout 1h30m;\n  sendfile ON;\n  limit_rate $rate;\n}\n"
    )
    assert run("V-args", text) == []


def test_args_bad_size_fires() -> None:
    [finding] = run("V-args", "http { client_max_body_size 10mb; }\n")
    assert "size" in finding.message


def test_args_reports_syntax_errors_and_missing_block() -> None:
    findings = run("V-args", 'events;\nhttp { return 200 "x; }\n')
    assert any(f.line == 1 and "no opening" in f.message for f in findings)
    assert any(f.line == 2 and "unterminated" in f.message for f in findings)


def test_args_ignores_map_entries() -> None:
    assert run("V-args", "http { map $a $b { default 0; ~x 1 2; } }\n") == []


def test_unknown_directive_fires_and_known_stays_silent() -> None:
    [finding] = run("V-unknown", "http {\n  sendfiel on;\n}\n")
    assert (finding.line, finding.severity) == (2, "error") and "sendfiel" in finding.message
    assert run("V-unknown", "http { sendfile on; map $a $b { whatever 1; } }\n") == []


def test_unknown_is_a_warning_when_third_party_modules_are_loaded() -> None:
    [finding] = run("V-unknown", "load_module modules/ngx_foo.so;\nhttp { foo_bar on; }\n")
    assert finding.severity == "warning"


def test_unknown_is_version_aware_for_new_directives() -> None:
    text = "http { server { listen 443 ssl; http2 on; keepalive_time 1h; } }\n"
    [finding] = run("V-unknown", text, OLD)
    assert "http2" in finding.message and "1.25.1" in finding.message
    # A name nginx knows is a warning at most (docs/analyzer-rules.md), with both versions.
    assert finding.severity == "warning"
    assert (finding.evidence["since"], finding.evidence["nginx_version"]) == ("1.25.1", "1.22.1")
    assert run("V-unknown", text, NEW) == []
    assert run("V-unknown", text) == []


def test_a_directive_newer_than_the_hosts_nginx_is_a_warning_naming_its_version() -> None:
    text = "http { server { listen 80; location /v/ { mp4; } } }\n"
    [finding] = run("V-unknown", text, HostFacts(nginx_version=(1, 0, 5)))
    assert finding.severity == "warning"
    assert "appeared in nginx 1.0.7" in finding.message and "runs 1.0.5" in finding.message
    assert run("V-unknown", text, HostFacts(nginx_version=(1, 0, 7))) == []
    # A name no module has stays an error, version or not.
    [typo] = run("V-unknown", "http { sendfiel on; }\n", HostFacts(nginx_version=(1, 0, 5)))
    assert typo.severity == "error"


def test_unknown_checks_the_build_modules() -> None:
    facts = HostFacts.from_dict(
        {"nginx_version": "1.22.1", "nginx_configure_args": "--with-http_ssl_module"}
    )
    text = "http { server { stub_status; ssl_protocols TLSv1.2; } }\n"
    [finding] = run("V-unknown", text, facts)
    assert "stub_status" in finding.message and "http_stub_status_module" in finding.message
    assert finding.severity == "warning"
    with_status = HostFacts.from_dict(
        {"nginx_configure_args": "--with-http_ssl_module --with-http_stub_status_module"}
    )
    assert run("V-unknown", text, with_status) == []


def test_dup_fires_on_twice_in_one_block_and_keeps_the_later() -> None:
    [finding] = run("V-dup", "http {\n  sendfile on;\n  sendfile off;\n}\n")
    assert finding.line == 3 and "is duplicate" in finding.message
    assert finding.fix is not None and (finding.fix.action, finding.fix.line) == ("remove", 2)


def test_dup_silent_for_repeatable_and_separate_blocks() -> None:
    text = (
        "http {\n  sendfile on;\n  add_header A 1;\n  add_header B 2;\n"
        "  server { sendfile off; listen 80; listen 81; }\n}\n"
    )
    assert run("V-dup", text) == []


def test_deprecated_listen_http2_only_from_1_25_1() -> None:
    text = "http { server {\n listen 443 ssl http2;\n} }\n"
    [finding] = run("V-deprecated", text, NEW)
    assert finding.line == 2 and finding.fix is not None and finding.fix.args == ["443", "ssl"]
    assert run("V-deprecated", text, OLD) == []


def test_deprecated_ssl_on_is_an_error_once_removed() -> None:
    text = "http { server {\n listen 443;\n ssl on;\n} }\n"
    [old] = run("V-deprecated", text, OLD)
    assert old.severity == "warning" and old.line == 3
    [new] = run("V-deprecated", text, NEW)
    assert new.severity == "error" and "removed" in new.message
    assert run("V-deprecated", "http { server { listen 443 ssl; } }\n", NEW) == []


def test_dup_knows_stock_setters_of_the_generated_table() -> None:
    [finding] = run(
        "V-dup", "http { server { location / {\n scgi_buffering on;\n scgi_buffering off;\n} } }\n"
    )
    assert finding.line == 3 and "scgi_buffering" in finding.message
    assert (
        run("V-dup", "http { server { location / { scgi_param A 1; scgi_param B 2; } } }\n") == []
    )


def test_args_use_the_generated_arity() -> None:
    [finding] = run("V-args", "http { server { location / { uwsgi_pass a b; } } }\n")
    assert "uwsgi_pass" in finding.message and "has 2" in finding.message
    assert run("V-args", "http { server { location / { uwsgi_pass 127.0.0.1:1; } } }\n") == []


def test_args_a_loaded_module_block_directive_needs_its_block() -> None:
    load = "load_module modules/ngx_http_geoip2_module.so;\n"
    [finding] = run("V-args", load + "http {\n geoip2 /g.mmdb;\n}\n")
    assert finding.line == 3 and "no opening" in finding.message
    text = load + "http { geoip2 /g.mmdb { $cc country iso_code; } }\n"
    assert run("V-args", text) == []


def test_unknown_names_an_optional_module_the_build_lacks() -> None:
    text = "http { server { location / { image_filter resize 10 10; } } }\n"
    lacking = HostFacts.from_dict({"nginx_configure_args": "--with-http_ssl_module"})
    [finding] = run("V-unknown", text, lacking)
    assert "http_image_filter_module" in finding.message
    having = HostFacts.from_dict(
        {"nginx_configure_args": "--with-http_ssl_module --with-http_image_filter_module=dynamic"}
    )
    assert run("V-unknown", text, having) == []
