"""/proc collectors: host metrics, and the nginx master and workers of a real nginx."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from nginx_fleet_agent.collectors import nginx_processes
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


def _fake_process(proc: Path, pid: int, ppid: int, title: str, ticks: tuple[int, int]) -> None:
    """A /proc/<pid> with what the collector reads: stat, status, cmdline, limits, fd/."""
    base = proc / str(pid)
    (base / "fd").mkdir(parents=True, exist_ok=True)
    (base / "task" / str(pid)).mkdir(parents=True, exist_ok=True)
    # Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
    # cmajflt utime stime ...
    (base / "stat").write_text(
        f"{pid} (nginx) S {ppid} {pid} {pid} 0 -1 0 0 0 0 0 {ticks[0]} {ticks[1]} 0 0\n"
    )
    (base / "status").write_text("Name:\tnginx\nVmRSS:\t    1000 kB\n")
    (base / "cmdline").write_bytes(title.encode() + b"\0")
    (base / "limits").write_text("Max open files            1024                 4096   files\n")


def test_worker_cpu_leaves_out_the_master_and_cache_manager(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = tmp_path / "proc"
    pid_file = tmp_path / "nginx.pid"
    pid_file.write_text("100\n")
    layout = {
        100: (1, "nginx: master process /usr/sbin/nginx"),
        101: (100, "nginx: worker process"),
        102: (100, "nginx: worker process"),
        103: (100, "nginx: cache manager process"),
    }
    for pid, (ppid, title) in layout.items():
        _fake_process(proc, pid, ppid, title, (0, 0))
    (proc / "100" / "task" / "100" / "children").write_text("101 102 103")
    clock = iter([1000.0, 1010.0])
    monkeypatch.setattr(nginx_processes.time, "monotonic", lambda: next(clock))
    collector = NginxProcessCollector(pid_file=pid_file, proc=proc)
    # 10 s later: workers used 3 s and 2 s, the master 1 s, the cache manager 4 s.
    ticks = nginx_processes._CLOCK_TICKS
    for pid, seconds in {100: 1, 101: 3, 102: 2, 103: 4}.items():
        _fake_process(proc, pid, layout[pid][0], layout[pid][1], (seconds * ticks, 0))
    processes = collector.collect()["nginx_processes"]
    assert processes["worker_cpu_pct"] == 50.0  # 5 s of 10 s: half a core
    assert processes["cpu_pct"] == 100.0


def test_worker_cpu_of_a_real_nginx_under_gzip_load(
    nginx_factory: Callable[..., NginxInstance],
) -> None:
    # Workers of a root-started nginx run as nobody: the files must be world-readable.
    with tempfile.TemporaryDirectory() as public:
        os.chmod(public, 0o755)  # noqa: S103 - nginx workers (nobody) read it
        big = Path(public) / "big.txt"
        # Varied text so that level 9 has work to do.
        big.write_text("".join(f"line {i} {i * 7919 % 104729} lorem ipsum\n" for i in range(60000)))
        big.chmod(0o644)
        instance = nginx_factory(GZIP_SERVER.replace("{root}", public))
        collector = NginxProcessCollector(pid_file=instance.pid_file)
        collector.collect()
        with httpx.Client(trust_env=False, headers={"Accept-Encoding": "gzip"}) as client:
            for _ in range(15):
                response = client.get(f"{instance.base_url}/big.txt")
                assert response.headers["content-encoding"] == "gzip"
                assert len(response.text) == big.stat().st_size
        processes = collector.collect()["nginx_processes"]
    assert processes["worker_cpu_pct"] > 0.0
    assert processes["cpu_pct"] >= processes["worker_cpu_pct"]


GZIP_SERVER = """
    server {
        listen 127.0.0.1:{port};
        root {root};
        gzip on;
        gzip_comp_level 9;
        gzip_min_length 1;
        gzip_types text/plain;
    }
"""
