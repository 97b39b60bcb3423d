"""/proc collectors: host metrics, and the nginx master and workers of a real nginx."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

from nginx_fleet_agent.collectors.nginx_processes import NginxProcessCollector
from nginx_fleet_agent.collectors.proc import SystemCollector, cpu_percentages

from tests.nginx_instance import NginxInstance


def test_cpu_percentages_from_deltas() -> None:
    before = [100, 0, 100, 700, 100, 0, 0, 0]
    after = [150, 0, 150, 850, 150, 0, 0, 0]  # 300 jiffies: 100 busy, 150 idle, 50 iowait
    assert cpu_percentages(before, after) == (33.33, 16.67)
    assert cpu_percentages(after, after) == (0.0, 0.0)


def test_system_metrics_shape_and_ranges() -> None:
    collector = SystemCollector()
    with socket.create_server(("127.0.0.1", 0)):
        system = collector.collect()["system"]
    cpu = system["cpu"]
    assert 0.0 <= cpu["total_pct"] <= 100.0
    assert len(cpu["per_core_pct"]) == os.cpu_count()
    assert all(0.0 <= pct <= 100.0 for pct in cpu["per_core_pct"])
    memory = system["memory"]
    assert 0 < memory["available_bytes"] <= memory["total_bytes"]
    assert memory["used_bytes"] == memory["total_bytes"] - memory["available_bytes"]
    assert set(system["load"]) == {"load1", "load5", "load15"}
    assert system["network"]["rx_bytes"] > 0
    assert system["tcp_states"]["LISTEN"] >= 1  # the socket opened above
    assert set(system["netstat"]) == {"listen_overflows", "listen_drops"}


def test_tcp_states_count_new_connections() -> None:
    collector = SystemCollector()
    before = collector.collect()["system"]["tcp_states"].get("ESTABLISHED", 0)
    with socket.create_server(("127.0.0.1", 0)) as server:
        clients = [socket.create_connection(server.getsockname()) for _ in range(3)]
        accepted = [server.accept()[0] for _ in clients]
        during = collector.collect()["system"]["tcp_states"].get("ESTABLISHED", 0)
        for sock in clients + accepted:
            sock.close()
    # Both ends of each loopback connection are ESTABLISHED sockets; other tests may come and go.
    assert during >= before + 6 - 2


def test_nginx_master_and_workers(nginx: NginxInstance) -> None:
    collector = NginxProcessCollector(pid_file=nginx.pid_file)
    result = collector.collect()
    assert nginx.process is not None
    assert result["nginx"] == {
        "up": True,
        "error": None,
        "master_pid": nginx.process.pid,
        "workers": 2,
    }
    processes = result["nginx_processes"]
    assert processes["fds_open"] > 0
    assert processes["worker_fds_max"] <= processes["fds_open"]
    assert processes["fds_limit"] == processes["worker_fds_limit"] > 0
    assert processes["rss_bytes"] > 1024 * 1024
    assert processes["cpu_pct"] >= 0.0


def test_master_found_by_scan_without_pid_file(nginx: NginxInstance) -> None:
    result = NginxProcessCollector(pid_file=None).collect()
    # Other nginx instances may run on this machine: the scan must find *a* master.
    assert result["nginx"]["up"] is True
    assert result["nginx"]["master_pid"] is not None


def test_nginx_down(nginx_factory: Callable[..., NginxInstance]) -> None:
    instance = nginx_factory()
    collector = NginxProcessCollector(pid_file=instance.pid_file)
    assert collector.collect()["nginx"]["up"] is True
    instance.stop()
    result = collector.collect()
    assert result["nginx"]["up"] is False
    assert "nginx.pid" in result["nginx"]["error"]
    assert result["nginx_processes"] is None
