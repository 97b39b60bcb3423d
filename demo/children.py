"""The processes the demo starts, and stopping exactly those, newest first."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Child:
    """One started process leading its own process group, so stopping it reaches its helpers."""

    name: str
    process: subprocess.Popen[bytes]
    stop_signal: signal.Signals
    log_path: Path
    signal_leader_only: bool


class ChildProcesses:
    """Starts processes in their own process groups and stops them by group, newest first.

    The children stay in the launcher's session: whoever started the launcher in a session of
    its own can stop everything that is left by session (stop_demo.py), even after the
    launcher itself was killed and had no chance to clean up.
    """

    def __init__(self, log_dir: Path) -> None:
        self._log_dir = log_dir
        self._children: list[Child] = []

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stop_signal: signal.Signals = signal.SIGTERM,
        signal_leader_only: bool = False,
    ) -> Child:
        """Start argv with stdout and stderr going to LOG_DIR/NAME.log.

        signal_leader_only: send the stop signal to the leader alone (an nginx master stops its
        own workers gracefully), the rest of the group is only swept after the leader is gone.
        """
        log_path = self._log_dir / f"{name}.log"
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                process_group=0,
            )
        child = Child(
            name=name,
            process=process,
            stop_signal=stop_signal,
            log_path=log_path,
            signal_leader_only=signal_leader_only,
        )
        self._children.append(child)
        return child

    def exited(self) -> list[Child]:
        """Children that have ended on their own."""
        return [child for child in self._children if child.process.poll() is not None]

    def stop_all(self, timeout_s: float = 10.0) -> None:
        """Stop every child, newest first; kill what is still there after the timeout."""
        while self._children:
            stop_child(self._children.pop(), timeout_s)


def stop_child(child: Child, timeout_s: float) -> None:
    """Signal the child's process group, wait, then SIGKILL the group if anything is left."""
    pgid = child.process.pid  # process_group=0 made the child the leader of its own group
    if child.signal_leader_only:
        child.process.send_signal(child.stop_signal)
    else:
        _signal_group(pgid, child.stop_signal)
    try:
        child.process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _signal_group(pgid, signal.SIGKILL)
        child.process.wait(timeout=timeout_s)
    # Helpers of the child (for example a worker it forked) may outlive their leader briefly.
    deadline = time.monotonic() + timeout_s
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if group_alive(pgid):
        _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


@dataclass(frozen=True)
class ProcessStat:
    """The fields of /proc/PID/stat that say where a process belongs."""

    pid: int
    state: str
    ppid: int
    pgrp: int
    session: int


def live_processes() -> list[ProcessStat]:
    """Every process that is not a zombie (zombies only wait for their parent to reap them)."""
    found = []
    for stat_path in Path("/proc").glob("[0-9]*/stat"):
        try:
            stat = stat_path.read_text()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, pgrp, session, ...
        state, ppid, pgrp, session = stat.rsplit(")", 1)[1].split()[:4]
        if state != "Z":
            found.append(
                ProcessStat(int(stat_path.parent.name), state, int(ppid), int(pgrp), int(session))
            )
    return found


def group_alive(pgid: int) -> bool:
    """Whether a live process is still in the process group."""
    return any(process.pgrp == pgid for process in live_processes())


def session_members(sid: int) -> list[int]:
    """The live processes of a session (the launcher's, when it was started with setsid)."""
    return sorted(process.pid for process in live_processes() if process.session == sid)
