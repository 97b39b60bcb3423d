"""`nginx -T` snapshots: re-read only on change; the include tree; the pid file location."""

from __future__ import annotations

import os
from pathlib import Path

from nginx_fleet_agent.collectors.nginx_build import parse_nginx_v
from nginx_fleet_agent.collectors.nginx_config import NginxConfigCollector
from nginx_fleet_agent.nginx_command import NginxCommand
from nginx_fleet_agent.nginx_syntax import inline_includes, split_dump
from nginx_fleet_agent.sampler import pid_file_of

from tests.nginx_instance import NginxInstance


def test_rereads_only_when_a_file_changes(nginx: NginxInstance) -> None:
    collector = NginxConfigCollector(NginxCommand(args=nginx.args), rescan_cycles=100)
    assert collector.refresh() is True
    first = collector.snapshot
    assert first is not None
    assert collector.refresh() is False
    site = nginx.prefix / "conf" / "conf.d" / "site.conf"
    site.write_text(site.read_text().replace("hello", "changed"))
    stat = site.stat()
    os.utime(site, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert collector.refresh() is True
    assert collector.snapshot is not None
    assert collector.snapshot.hash != first.hash
    assert "changed" in collector.snapshot.dump


def test_new_file_in_an_included_directory_is_noticed(nginx: NginxInstance) -> None:
    collector = NginxConfigCollector(NginxCommand(args=nginx.args), rescan_cycles=100)
    collector.refresh()
    conf_d = nginx.prefix / "conf" / "conf.d"
    (conf_d / "extra.conf").write_text("map $uri $extra_flag { default 0; }\n")
    stat = conf_d.stat()
    os.utime(conf_d, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert collector.refresh() is True
    assert collector.snapshot is not None
    assert str(conf_d / "extra.conf") in collector.snapshot.files


def test_rescan_after_n_cycles_even_without_change(nginx: NginxInstance) -> None:
    collector = NginxConfigCollector(NginxCommand(args=nginx.args), rescan_cycles=3)
    collector.refresh()
    assert [collector.refresh() for _ in range(3)] == [False, False, True]


def test_broken_config_keeps_last_snapshot_and_reports(nginx: NginxInstance) -> None:
    collector = NginxConfigCollector(NginxCommand(args=nginx.args), rescan_cycles=100)
    collector.refresh()
    good = collector.snapshot
    (nginx.prefix / "conf" / "conf.d" / "site.conf").write_text("server { listen x")
    assert collector.refresh(force=True) is True
    assert collector.snapshot is good
    assert collector.error is not None
    assert "failed" in collector.error


def test_include_tree_and_pid_file(nginx: NginxInstance) -> None:
    dump = NginxCommand(args=nginx.args).run("-T").stdout
    sections = split_dump(dump)
    assert sections[0].path == str(nginx.prefix / "conf" / "nginx.conf")
    tree = inline_includes(sections)
    http = next(d for d in tree if d.name == "http")
    assert any(d.name == "server" for d in http.block or [])
    assert pid_file_of(tree, None, None) == nginx.pid_file


def test_pid_file_defaults_from_the_build() -> None:
    build = parse_nginx_v(
        "nginx version: nginx/1.22.1\n"
        "configure arguments: --prefix=/usr/share/nginx --pid-path=run/nginx.pid "
        "--with-http_ssl_module --with-stream=dynamic --with-http_geoip_module=dynamic\n"
    )
    assert build.version == "1.22.1"
    assert build.modules == ["http_ssl_module", "stream_module", "http_geoip_module"]
    assert pid_file_of([], build, None) == Path("/usr/share/nginx/run/nginx.pid")
    assert pid_file_of([], build, "/srv/x/") == Path("/srv/x/run/nginx.pid")
    assert pid_file_of([], None, None) is None


def test_openssl_version_prefers_the_library_nginx_runs_with() -> None:
    header = "nginx version: nginx/1.22.1\n"
    running = parse_nginx_v(
        header + "built with OpenSSL 3.0.11 19 Sep 2023 (running with OpenSSL 3.0.13 30 Jan 2024)\n"
    )
    assert running.openssl_version == "3.0.13"
    built = parse_nginx_v(
        header + "built with OpenSSL 1.1.1w  11 Sep 2023\nTLS SNI support enabled\n"
    )
    assert built.openssl_version == "1.1.1w"
    assert parse_nginx_v(header).openssl_version is None
