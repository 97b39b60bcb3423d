"""A real Celery worker for the notify tests that need one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

BACKEND_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture
def worker(database_url: str, redis_url: str, tmp_path: Path) -> Iterator[Path]:
    """A Celery worker process with two child processes (so one stuck send holds up no
    other), on the test database, Redis and data dir; stopped by PID. Yields its log file."""
    log_path = tmp_path / "worker.log"
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "app.worker.celery_app", "worker",
                "--pool=prefork", "--concurrency=2", "--loglevel=INFO", "--without-gossip",
                "--without-mingle", "--without-heartbeat",
            ],
            cwd=BACKEND_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            yield log_path
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
