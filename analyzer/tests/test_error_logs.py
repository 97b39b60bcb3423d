"""Where error logs go, as nginx decides it (src/core/ngx_log.c, ngx_log_open_default)."""

from __future__ import annotations

from nginx_fleet_analyzer.error_logs import ErrorLogTarget, discover
from nginx_fleet_analyzer.loader import parse_dump, parse_text


def paths(text: str, **kwargs: str) -> list[tuple[str, bool]]:
    return [(t.path, t.is_file) for t in discover(parse_text(text), **kwargs)]


def test_every_level_is_found_and_relative_paths_resolve_against_the_prefix() -> None:
    config = """
    error_log logs/main.log warn;
    error_log /var/log/nginx/also.log;
    events {}
    http {
        error_log /var/log/nginx/http.log;
        server {
            listen 80;
            error_log logs/site.log info;
            location /api { error_log /var/log/nginx/api.log debug; }
        }
    }
    stream { error_log /var/log/nginx/stream.log; server { listen 90; error_log s.log; } }
    mail { error_log /var/log/nginx/mail.log; }
    """
    assert paths(config, prefix="/srv/nginx") == [
        ("/srv/nginx/logs/main.log", True),
        ("/var/log/nginx/also.log", True),
        ("/var/log/nginx/http.log", True),
        ("/srv/nginx/logs/site.log", True),
        ("/var/log/nginx/api.log", True),
        ("/var/log/nginx/stream.log", True),
        ("/srv/nginx/s.log", True),
        ("/var/log/nginx/mail.log", True),
    ]


def test_without_a_main_level_file_log_nginx_also_writes_its_default_log() -> None:
    # Only http logs: the compiled-in default is opened for the cycle all the same.
    config = "http { error_log /var/log/h.log; }"
    assert paths(config, prefix="/p") == [("/p/logs/error.log", True), ("/var/log/h.log", True)]
    assert paths(config, default_path="/var/log/nginx/error.log")[0] == (
        "/var/log/nginx/error.log",
        True,
    )
    # Debian builds with --error-log-path=stderr: the default is then no file.
    assert discover(parse_text(config), default_path="stderr")[0] == ErrorLogTarget(
        "stderr", False, "written to nginx's standard error, not to a file"
    )
    # syslog and memory are no file logs either, so the default is still opened.
    config = "error_log syslog:server=127.0.0.1:514; error_log memory:1m; events {}"
    assert paths(config, prefix="/p") == [
        ("/p/logs/error.log", True),
        ("syslog:server=127.0.0.1:514", False),
        ("memory:1m", False),
    ]


def test_stderr_at_the_main_level_counts_as_a_file_log() -> None:
    assert paths("error_log stderr; events {}", prefix="/p") == [("stderr", False)]


def test_targets_that_are_no_file_say_why_and_each_path_is_listed_once() -> None:
    config = """
    error_log /var/log/e.log;
    error_log /var/log/e.log warn;
    http { server { listen 80; error_log syslog:server=unix:/dev/log,tag=web; } }
    """
    found = discover(parse_text(config))
    assert [(t.path, t.is_file, t.reason) for t in found] == [
        ("/var/log/e.log", True, None),
        ("syslog:server=unix:/dev/log,tag=web", False, "sent to syslog, not to a file"),
    ]


def test_a_map_entry_named_error_log_is_not_a_directive() -> None:
    config = """
    error_log /var/log/e.log;
    http { map $uri $x { error_log /not/a/log; default 0; } }
    """
    assert paths(config) == [("/var/log/e.log", True)]


def test_a_dump_reads_included_files() -> None:
    dump = (
        "# configuration file /etc/nginx/nginx.conf:\n"
        "error_log /var/log/nginx/error.log;\nhttp { include /etc/nginx/conf.d/*.conf; }\n\n"
        "# configuration file /etc/nginx/conf.d/site.conf:\n"
        "server { listen 80; error_log /var/log/nginx/site.error.log; }\n"
    )
    assert [t.path for t in discover(parse_dump(dump))] == [
        "/var/log/nginx/error.log",
        "/var/log/nginx/site.error.log",
    ]


def test_a_file_read_alone_assumes_no_default() -> None:
    site = parse_text("server { listen 80; error_log /var/log/site.log; }", context="http")
    assert [t.path for t in discover(site)] == ["/var/log/site.log"]
