"""Logging rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import MetricsWindow
from nginx_fleet_analyzer.findings import Category

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

SITE = """events {}
http {
%s
    server {
        listen 80;
    }
}
"""
BUSY = MetricsWindow(req_per_s=2500)


def test_l_buffer_fires_on_busy_host_with_unbuffered_log() -> None:
    [finding] = run("L-buffer", SITE % "    access_log /var/log/nginx/access.log;", metrics=BUSY)
    assert (finding.severity, finding.line) == ("info", 3)
    assert finding.fix is not None
    assert finding.fix.args == [
        "/var/log/nginx/access.log",
        "combined",
        "buffer=64k",
        "flush=5s",
    ]


def test_l_buffer_silent_when_buffered_quiet_or_unmeasured() -> None:
    buffered = "    access_log /var/log/nginx/access.log combined buffer=32k;"
    assert run("L-buffer", SITE % buffered, metrics=BUSY) == []
    plain = "    access_log /var/log/nginx/access.log;"
    assert run("L-buffer", SITE % plain, metrics=MetricsWindow(req_per_s=200)) == []
    assert run("L-buffer", SITE % plain) == []
    assert run("L-buffer", SITE % "    access_log off;", metrics=BUSY) == []


def test_l_error_level_fires_on_debug_and_info() -> None:
    text = (
        "error_log /var/log/nginx/error.log debug;\n" + SITE % "    error_log /var/log/h.log info;"
    )
    findings = run("L-error-level", text)
    assert [(f.line, f.evidence["level"]) for f in findings] == [(1, "debug"), (4, "info")]
    assert findings[0].fix is not None
    assert findings[0].fix.args == ["/var/log/nginx/error.log", "warn"]


def test_l_error_level_silent_on_warn_or_default() -> None:
    text = "error_log /var/log/nginx/error.log warn;\n" + SITE % "    error_log /var/log/h.log;"
    assert run("L-error-level", text) == []


def test_l_fields_fires_on_custom_format_without_request_time() -> None:
    body = "    log_format main '$remote_addr $status';\n    access_log /var/log/a.log main;"
    [finding] = run("L-fields", SITE % body)
    assert (finding.severity, finding.line) == ("info", 3)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args[0]) == ("set", "main")
    assert "$request_time" in finding.fix.args[-1]


def test_l_fields_fires_on_builtin_combined() -> None:
    [finding] = run("L-fields", SITE % "    access_log /var/log/a.log;")
    assert finding.line == 3
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context, finding.fix.args[0]) == (
        "add",
        "http",
        "timed",
    )


def test_l_fields_silent_when_request_time_is_logged() -> None:
    body = (
        "    log_format main '$remote_addr $status rt=$request_time';\n"
        "    access_log /var/log/a.log main;"
    )
    assert run("L-fields", SITE % body) == []


def test_logging_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(
        Category.LOGGING, SITE % "    access_log /x main;\n    error_log /y debug;"
    )


LOGGED = """events {}
http {
    log_format timed '$remote_addr "$request" $status $request_time';
    access_log /var/log/nginx/access.log;
    server {
        listen 80;
        access_log /var/log/nginx/a.log timed;
    }
    server {
        listen 80;
%s
        location /health {
            access_log off;
        }
    }
}
"""


def test_l_fields_judges_the_formats_in_force_not_every_line() -> None:
    # http's combined log is overridden in every server: nothing writes it.
    assert run("L-fields", LOGGED % "        access_log /var/log/nginx/b.log timed;") == []
    [finding] = run("L-fields", LOGGED % "")
    assert (finding.line, finding.evidence["log_format"]) == (4, "combined")


def test_l_buffer_skips_logs_nothing_writes() -> None:
    text = LOGGED % "        access_log /var/log/nginx/b.log timed buffer=64k;"
    found = run("L-buffer", text, metrics=BUSY)
    assert [f.line for f in found] == [7]
