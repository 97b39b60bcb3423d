"""CPU seconds used over a window by groups of processes: a process tree we started, the
PostgreSQL sessions of one database, every process with a given command name."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from harness.pgdb import libpq_dsn
from harness.proc_stats import cpu_times


def children_of(pid: int) -> list[int]:
    """PIDs of the live children of `pid` (every thread's children)."""
    found: list[int] = []
    with contextlib.suppress(FileNotFoundError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):
                found.extend(int(child) for child in (task / "children").read_text().split())
    return found


def tree_of(pid: int) -> list[int]:
    """`pid` and all its live descendants."""
    pids, queue = [], [pid]
    while queue:
        current = queue.pop()
        pids.append(current)
        queue.extend(children_of(current))
    return pids


def pids_named(comm: str) -> list[int]:
    """PIDs of every process whose command name (/proc/PID/comm) is `comm`."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                if (entry / "comm").read_text().strip() == comm:
                    found.append(int(entry.name))
    return found


def database_session_pids(database: str) -> list[int]:
    """Backend PIDs of the sessions connected to `database`, this probe's own excluded."""
    with psycopg.connect(libpq_dsn(database)) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        ).fetchall()
    return [int(pid) for (pid,) in rows]


@dataclass
class CpuGroup:
    """A named set of processes found again at each sample; each PID's CPU is counted from the
    first time it is seen (or from the group's start for PIDs present then), and a PID that
    exits keeps the last value read. Sample often enough to see short-lived processes."""

    name: str
    find: Callable[[], Iterable[int]]
    # Count the children a process has reaped too (cutime/cstime): for a process that runs
    # short-lived commands; a tree's members are counted each on its own instead.
    with_reaped_children: bool = False
    _start: dict[int, float] = field(default_factory=dict)
    _last: dict[int, float] = field(default_factory=dict)

    def _read(self, pid: int) -> float | None:
        try:
            times = cpu_times(pid)
        except (FileNotFoundError, ProcessLookupError):
            return None
        return times.total_s if self.with_reaped_children else times.own_s

    def sample(self) -> None:
        """Read the CPU of every process of the group now."""
        for pid in self.find():
            value = self._read(pid)
            if value is None:
                continue
            # A process born after `begin` counts from zero.
            self._start.setdefault(pid, 0.0)
            self._last[pid] = value

    def begin(self) -> None:
        """Start the window: what the group's processes used so far does not count."""
        self._start.clear()
        self._last.clear()
        for pid in self.find():
            value = self._read(pid)
            if value is not None:
                self._start[pid] = value
                self._last[pid] = value

    def used_s(self) -> float:
        """CPU seconds used by the group since `begin`."""
        return sum(self._last[pid] - self._start.get(pid, 0.0) for pid in self._last)


def tree_group(name: str, root_pids: Iterable[int]) -> CpuGroup:
    """A group of process trees (the roots and their live descendants)."""
    roots = list(root_pids)

    def find() -> list[int]:
        return [pid for root in roots for pid in tree_of(root)]

    return CpuGroup(name=name, find=find, with_reaped_children=False)
