"""Start child processes with their output in a log file and stop them by PID, whatever happens."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ManagedProcess:
    """A child process we started; `stop` ends exactly this PID."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        """PID of the child."""
        return self.popen.pid

    def alive(self) -> bool:
        """True while the child has not exited."""
        return self.popen.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        """Last lines of the child's log, to explain a failure."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, stop_signal: int = signal.SIGTERM, timeout_s: float = 15.0) -> None:
        """Send `stop_signal` to the PID, wait, and SIGKILL it if it does not exit in time."""
        if self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.popen.pid, stop_signal)
        try:
            self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=timeout_s)


def start_process(
    name: str,
    argv: Sequence[str],
    *,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> ManagedProcess:
    """Start `argv` with stdout and stderr appended to `log_path`."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
    return ManagedProcess(name=name, popen=popen, log_path=log_path)


@contextlib.contextmanager
def running(
    name: str,
    argv: Sequence[str],
    *,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stop_signal: int = signal.SIGTERM,
) -> Iterator[ManagedProcess]:
    """Context manager: the process runs inside the block and is stopped by PID on the way out."""
    process = start_process(name, argv, log_path=log_path, env=env, cwd=cwd)
    try:
        yield process
    finally:
        process.stop(stop_signal)


def raise_sigterm_as_exit() -> None:
    """Turn SIGTERM into SystemExit so that every `finally` stops its processes."""

    def _exit(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)
