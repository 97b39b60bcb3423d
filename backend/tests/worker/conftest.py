"""Real Celery worker processes on the test database and Redis, for the worker tests.

- ``start_worker(queues=None)``: starts `celery worker` (solo pool; every queue, or the given
  ones) logging to ``tmp_path / "worker.log"``; every one started is stopped by PID after the
  test. ``tests.worker.test_worker_process.worker`` (one worker started with the test) is
  imported by other packages' tests, so it stays there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

BACKEND_DIR = Path(__file__).resolve().parents[2]

StartWorker = Callable[..., subprocess.Popen[bytes]]


def start_worker_process(
    *, database_url: str, redis_url: str, log: IO[bytes], queues: list[str] | None = None
) -> subprocess.Popen[bytes]:
    """A `celery worker` process (solo pool) on the given database and broker."""
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url}
    argv = [
        sys.executable, "-m", "celery", "-A", "app.worker.celery_app", "worker",
        "--pool=solo", "--loglevel=INFO", "--without-gossip", "--without-mingle",
        "--without-heartbeat",
    ]  # fmt: skip
    if queues:
        argv.append(f"--queues={','.join(queues)}")
    return subprocess.Popen(argv, cwd=BACKEND_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)


def stop_worker_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (a warm shutdown), then SIGKILL after 20 s."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


@pytest.fixture
def start_worker(database_url: str, redis_url: str, tmp_path: Path) -> Iterator[StartWorker]:
    """Factory of worker processes, each stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []
    log = (tmp_path / "worker.log").open("ab")

    def start(queues: list[str] | None = None) -> subprocess.Popen[bytes]:
        process = start_worker_process(
            database_url=database_url, redis_url=redis_url, log=log, queues=queues
        )
        started.append(process)
        return process

    try:
        yield start
    finally:
        for process in started:
            stop_worker_process(process)
        log.close()
