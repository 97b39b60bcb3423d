"""Process helpers: real nginx on loopback, CPU and RSS from /proc, stop by PID."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from harness.nginx_instance import running_nginx
from harness.proc_stats import cpu_times, peak_rss_bytes, rss_bytes
from harness.processes import running


def test_nginx_answers_stub_status_and_is_gone_after_the_block(tmp_path: Path) -> None:
    with running_nginx(tmp_path / "nginx") as nginx:
        reply = httpx.get(nginx.stub_status_url)
        master_pid = nginx.process.pid
        assert int(nginx.pid_file.read_text()) == master_pid
    assert reply.status_code == 200
    assert reply.text.startswith("Active connections:")
    assert not Path(f"/proc/{master_pid}").exists()


def test_busy_process_accumulates_more_cpu_than_a_sleeping_one(tmp_path: Path) -> None:
    busy_code = (
        "import time\nend = time.process_time() + 0.5\n"
        "while time.process_time() < end: pass\ntime.sleep(30)"
    )
    sleep_code = "import time; time.sleep(30)"
    with (
        running("busy", [sys.executable, "-c", busy_code], log_path=tmp_path / "b.log") as busy,
        running("idle", [sys.executable, "-c", sleep_code], log_path=tmp_path / "i.log") as idle,
    ):
        # The busy child burns 0.5 s of CPU then blocks; wait until its CPU stops growing.
        while cpu_times(busy.pid).own_s < 0.45:
            assert busy.alive(), busy.log_tail()
        busy_cpu, idle_cpu = cpu_times(busy.pid).total_s, cpu_times(idle.pid).total_s
        assert peak_rss_bytes(idle.pid) >= rss_bytes(idle.pid) > 0
    assert busy_cpu > idle_cpu
    assert not busy.alive() and not idle.alive()


def test_cpu_times_of_a_missing_process_raise() -> None:
    with pytest.raises(FileNotFoundError):
        cpu_times(2**22 + 12345)
