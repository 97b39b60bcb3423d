"""`celery worker --nice N` runs the worker and its pool's children at niceness N."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.worker.conftest import BACKEND_DIR, stop_worker_process


def niceness(pid: int) -> int:
    """The niceness of a process (field 19 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16])


def children(pid: int) -> list[int]:
    """PIDs of the direct children of a process."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def worker_argv(*extra: str) -> list[str]:
    """A prefork worker of one child on the analysis queue."""
    return [
        sys.executable, "-m", "celery", "-A", "app.worker.celery_app", "worker",
        "--pool=prefork", "--concurrency=1", "--queues=analysis", "--loglevel=INFO",
        "--without-gossip", "--without-mingle", "--without-heartbeat", *extra,
    ]  # fmt: skip


def test_the_worker_and_its_pool_run_at_the_given_niceness(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url}
    own = niceness(os.getpid())
    with (tmp_path / "worker.log").open("wb") as log:
        process = subprocess.Popen(
            worker_argv("--nice", "5"),
            cwd=BACKEND_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while not (pool := children(process.pid)):
                assert process.poll() is None, (tmp_path / "worker.log").read_text()
                assert time.monotonic() < deadline, "no pool process within 60 s"
                time.sleep(0.5)
            assert niceness(process.pid) == min(19, own + 5)
            assert [niceness(child) for child in pool] == [min(19, own + 5)] * len(pool)
        finally:
            stop_worker_process(process)


def test_a_niceness_out_of_range_is_refused(database_url: str, redis_url: str) -> None:
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url}
    done = subprocess.run(
        worker_argv("--nice", "25"),
        cwd=BACKEND_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "--nice must be within 0-19, got 25" in done.stdout + done.stderr
