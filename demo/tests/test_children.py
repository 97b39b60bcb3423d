"""Stopping what the demo started, including processes that ignore the polite signal."""

from __future__ import annotations

import sys
from pathlib import Path

from children import ChildProcesses, group_alive

# A leader that ignores SIGTERM and forks a helper which does the same.
STUBBORN = """
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    time.sleep(600)
print("started", flush=True)
time.sleep(600)
"""


def test_stop_all_kills_a_group_that_ignores_sigterm(tmp_path: Path) -> None:
    children = ChildProcesses(tmp_path)
    child = children.start("stubborn", [sys.executable, "-c", STUBBORN])
    log = tmp_path / "stubborn.log"
    while "started" not in (log.read_text() if log.exists() else ""):
        assert child.process.poll() is None
    assert group_alive(child.process.pid)

    children.stop_all(timeout_s=1.0)

    assert child.process.returncode is not None
    assert not group_alive(child.process.pid)
    assert children.exited() == []
