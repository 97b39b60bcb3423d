"""Stop a demo launcher started in a session of its own, and every process left in that session.

The launcher stops what it started when asked (SIGTERM). A launcher that was killed, hung or
crashed half-way cannot, so whatever is still in its session afterwards is killed here: its
children stay in the launcher's session (each in its own process group), so none escapes.
Exit status: 0 when the launcher stopped in time and left nothing, 1 when something had to be
killed (listed on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from children import live_processes, session_members

POLL_S = 0.2


def command_line(pid: int) -> str:
    """What a process runs, for the report."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200]


def wait_until(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Poll condition() until it holds or the timeout passes; whether it held."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


def stop_demo(launcher_pid: int, timeout_s: float) -> list[str]:
    """SIGTERM the launcher, wait, then SIGKILL its whole session; what had to be killed."""
    # A launcher started with setsid leads its session: the session id is its pid.
    sid = launcher_pid
    launcher = next((p for p in live_processes() if p.pid == launcher_pid), None)
    if launcher is not None and launcher.session != sid:
        raise ValueError(f"process {launcher_pid} does not lead a session: start it with setsid")
    if launcher is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(launcher_pid, signal.SIGTERM)
        wait_until(lambda: launcher_pid not in session_members(sid), timeout_s)
    killed = []
    for _ in range(5):  # a process forking while being swept is caught on the next round
        left = session_members(sid)
        if not left:
            break
        for pid in left:
            killed.append(f"{pid} {command_line(pid)}")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not session_members(sid), timeout_s)
    if session_members(sid):
        raise RuntimeError(f"processes of session {sid} survived SIGKILL: {session_members(sid)}")
    return killed


def main(argv: list[str] | None = None) -> int:
    """Stop the demo whose launcher has this pid."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pid", type=int, help="the launcher's pid (leader of its own session)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for it")
    args = parser.parse_args(argv)
    killed = stop_demo(args.pid, args.timeout)
    for line in killed:
        print(f"killed, left behind by the demo: {line}", file=sys.stderr)
    return 1 if killed else 0


if __name__ == "__main__":
    sys.exit(main())
