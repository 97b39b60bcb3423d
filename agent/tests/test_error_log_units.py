"""Error-log counting on lines as nginx 1.22 writes them, and the collector on plain files."""

from __future__ import annotations

import json
import os
from pathlib import Path

from nginx_fleet_agent.collectors.nginx_build import parse_nginx_v
from nginx_fleet_agent.error_log.collector import ErrorLogCollector
from nginx_fleet_agent.error_log.counts import ErrorCounts
from nginx_fleet_agent.sampler import default_error_log
from nginx_fleet_analyzer.loader import parse_text

# Lines copied from a real nginx 1.22.1 error log (addresses and paths changed).
DROP = b"2026/11/25 10:00:01 [alert] 812#812: 16 worker_connections are not enough\n"
DROP_ACCEPTING = (
    b"2026/11/25 10:00:01 [alert] 812#812: 16 worker_connections are not enough "
    b"while accepting new connection on 127.0.0.1:8080\n"
)
REUSING = (
    b"2026/11/25 10:00:01 [warn] 812#812: 16 worker_connections are not enough, "
    b"reusing connections\n"
)
EMFILE_ACCEPT = b"2026/11/25 10:00:02 [crit] 812#812: accept4() failed (24: Too many open files)\n"
EMFILE_OPEN = (
    b'2026/11/25 10:00:02 [crit] 812#812: *9 open() "/srv/www/index.html" failed '
    b'(24: Too many open files), client: 127.0.0.1, server: _, request: "GET / HTTP/1.1", '
    b'host: "example.test"\n'
)
NOT_FOUND = (
    b'2026/11/25 10:00:03 [error] 812#812: *10 open() "/srv/www/x" failed '
    b'(2: No such file or directory), client: 127.0.0.1, server: _, request: "GET /x HTTP/1.1", '
    b'host: "example.test"\n'
)
NOTICE = b"2026/11/25 10:00:04 [notice] 811#811: signal process started\n"


def counted(*lines: bytes) -> dict[str, object]:
    counts = ErrorCounts()
    counts.add(b"".join(lines))
    return counts.to_json()


def test_levels_and_messages_are_counted() -> None:
    result = counted(DROP, DROP_ACCEPTING, REUSING, EMFILE_ACCEPT, EMFILE_OPEN, NOT_FOUND, NOTICE)
    assert result == {
        "lines": 7,
        "levels": {
            "emerg": 0,
            "alert": 2,
            "crit": 2,
            "error": 1,
            "warn": 1,
            "notice": 1,
            "info": 0,
        },
        "messages": {
            "worker_connections_not_enough": 2,
            "worker_connections_reusing": 1,
            "too_many_open_files": 2,
        },
    }


def test_client_supplied_text_cannot_imitate_a_counted_message() -> None:
    # A Host header, a Referer or a URI holding the texts: the lines are still what they are.
    forged_host = (
        b'2026/11/25 10:00:03 [error] 812#812: *11 open() "/srv/www/y" failed '
        b"(2: No such file or directory), client: 127.0.0.1, server: _, "
        b'request: "GET /y HTTP/1.1", host: "(24: Too many open files)", '
        b'referrer: "16 worker_connections are not enough"\n'
    )
    forged_start = (
        b"2026/11/25 10:00:03 [info] 812#812: *12 client sent invalid header line: "
        b'"X: 16 worker_connections are not enough" while reading client request headers, '
        b"client: 127.0.0.1, server: _\n"
    )
    result = counted(forged_host, forged_start)
    assert result["messages"] == {
        "worker_connections_not_enough": 0,
        "worker_connections_reusing": 0,
        "too_many_open_files": 0,
    }
    assert result["levels"] == {
        "emerg": 0,
        "alert": 0,
        "crit": 0,
        "error": 1,
        "warn": 0,
        "notice": 0,
        "info": 1,
    }


def test_continuation_and_debug_lines_count_as_lines_only() -> None:
    fastcgi = (
        b"2026/11/25 10:00:03 [error] 812#812: *13 FastCGI sent in stderr: "
        b'"PHP Warning: first\n[alert] second line" while reading response header\n'
    )
    debug = b"2026/11/25 10:00:03 [debug] 812#812: *13 http cleanup add: 0000\n"
    result = counted(fastcgi, debug)
    assert result["lines"] == 3
    levels = result["levels"]
    assert isinstance(levels, dict)
    assert levels["error"] == 1 and levels["alert"] == 0 and sum(levels.values()) == 1


def config_with(path: Path, *more: str) -> str:
    return f"error_log {path};\n" + "".join(f"error_log {m};\n" for m in more) + "events {}\n"


def test_collector_counts_per_interval_from_the_end_and_reports_unreadable_targets(
    tmp_path: Path,
) -> None:
    log = tmp_path / "error.log"
    log.write_bytes(DROP * 5)  # there before the agent: not counted
    collector = ErrorLogCollector(rotate_wait_s=0)
    assert collector.collect() is None  # no config seen yet: nothing is known
    collector.use_config(
        parse_text(config_with(log, "syslog:server=127.0.0.1:5514", "stderr", "memory:64k"))
    )
    first = collector.collect()
    assert first is not None
    assert first["lines"] == 0
    assert first["files"] == [
        {"path": str(log), "readable": True, "error": None},
        {
            "path": "syslog:server=127.0.0.1:5514",
            "readable": False,
            "error": "sent to syslog, not to a file",
        },
        {
            "path": "stderr",
            "readable": False,
            "error": "written to nginx's standard error, not to a file",
        },
        {
            "path": "memory:64k",
            "readable": False,
            "error": "kept in nginx's memory (debug builds), not in a file",
        },
    ]
    with log.open("ab") as handle:
        handle.write(DROP * 3 + REUSING)
    second = collector.collect()
    assert second is not None
    assert second["messages"]["worker_connections_not_enough"] == 3
    assert second["messages"]["worker_connections_reusing"] == 1
    third = collector.collect()
    assert third is not None and third["lines"] == 0
    collector.close()


def test_a_missing_file_is_reported_then_counted_whole_once_it_appears(tmp_path: Path) -> None:
    log = tmp_path / "later.log"
    collector = ErrorLogCollector(rotate_wait_s=0)
    collector.use_config(parse_text(config_with(log)))
    first = collector.collect()
    assert first is not None
    assert first["files"] == [{"path": str(log), "readable": False, "error": "file does not exist"}]
    log.write_bytes(DROP * 2)
    second = collector.collect()
    assert second is not None
    assert second["files"][0]["readable"] is True
    assert second["messages"]["worker_connections_not_enough"] == 2
    collector.close()


def test_positions_survive_a_restart_and_a_rotation_while_stopped(tmp_path: Path) -> None:
    log = tmp_path / "error.log"
    log.write_bytes(b"")
    config = parse_text(config_with(log))
    first = ErrorLogCollector(rotate_wait_s=0)
    first.use_config(config)
    first.collect()
    with log.open("ab") as handle:
        handle.write(DROP * 4)
    counted_first = first.collect()
    assert counted_first is not None
    saved = json.loads(json.dumps(first.positions()))  # as the spool stores them
    first.close()
    # While no agent runs: more lines, then a logrotate rename and a new file.
    with log.open("ab") as handle:
        handle.write(DROP * 2)
    os.rename(log, tmp_path / "error.log.1")
    log.write_bytes(DROP * 7)
    second = ErrorLogCollector(rotate_wait_s=0)
    second.use_config(config)
    second.restore(saved)
    total = 0
    for _ in range(4):  # the renamed file first, then (once it is done with) the new one
        result = second.collect()
        assert result is not None
        total += result["messages"]["worker_connections_not_enough"]
    assert counted_first["messages"]["worker_connections_not_enough"] == 4
    assert total == 2 + 7
    second.close()


def test_a_target_gone_from_the_config_forgets_its_position(tmp_path: Path) -> None:
    old, new = tmp_path / "old.log", tmp_path / "new.log"
    old.write_bytes(b"")
    new.write_bytes(b"")
    collector = ErrorLogCollector()
    collector.use_config(parse_text(config_with(old)))
    collector.collect()
    assert list(collector.positions()) == [str(old)]
    collector.use_config(parse_text(config_with(new)))
    collector.collect()
    assert list(collector.positions()) == [str(new)]
    collector.close()


def test_the_default_error_log_is_the_e_option_else_the_compiled_in_path() -> None:
    debian = parse_nginx_v(
        "nginx version: nginx/1.22.1\nconfigure arguments: --prefix=/usr/share/nginx "
        "--error-log-path=stderr --http-log-path=/var/log/nginx/access.log\n"
    )
    assert default_error_log(debian, []) == "stderr"
    assert default_error_log(debian, ["-p", "/srv/", "-e", "logs/error.log"]) == "logs/error.log"
    assert default_error_log(debian, ["-e/var/log/early.log"]) == "/var/log/early.log"
    # A value of another option is no -e, even when it starts like one.
    assert default_error_log(debian, ["-g", "-e; daemon off;"]) == "stderr"
    assert default_error_log(None, []) is None
