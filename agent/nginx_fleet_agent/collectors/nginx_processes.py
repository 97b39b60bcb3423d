"""The nginx master and its workers, from /proc: liveness, fds against limits, RSS and CPU."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_MASTER_TITLE = "nginx: master process"
_WORKER_TITLE = "nginx: worker process"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcessStats:
    """What one nginx process holds."""

    pid: int
    title: str
    cpu_ticks: int
    rss_bytes: int
    fds_open: int | None
    fds_limit: int | None


def read_cmdline(proc: Path, pid: int) -> str:
    """The process title ("nginx: worker process"), or "" when the process is gone."""
    try:
        raw = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def read_pid_file(path: Path) -> int | None:
    """The pid in an nginx pid file, or None when it is absent or garbled."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def scan_for_master(proc: Path) -> int | None:
    """The lowest pid whose title says it is an nginx master (used when no pid file is known)."""
    masters = []
    for entry in os.scandir(proc):
        if entry.name.isdigit() and read_cmdline(proc, int(entry.name)).startswith(_MASTER_TITLE):
            masters.append(int(entry.name))
    return min(masters) if masters else None


def children_of(proc: Path, pid: int) -> list[int]:
    """Direct children of a process (the kernel's list, else a /proc scan)."""
    children_file = proc / str(pid) / "task" / str(pid) / "children"
    try:
        return [int(p) for p in children_file.read_text().split()]
    except FileNotFoundError:
        pass  # kernel built without CONFIG_PROC_CHILDREN: fall back to reading every ppid
    except OSError:
        return []
    found = []
    for entry in os.scandir(proc):
        if entry.name.isdigit() and _read_stat(proc, int(entry.name))[0] == pid:
            found.append(int(entry.name))
    return found


def read_process(proc: Path, pid: int) -> ProcessStats | None:
    """Stats of one process, or None when it exited meanwhile."""
    base = proc / str(pid)
    ppid, ticks = _read_stat(proc, pid)
    if ppid < 0:
        return None
    rss = 0
    try:
        for line in (base / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
                break
    except OSError:
        return None
    try:
        fds_open: int | None = len(os.listdir(base / "fd"))
    except OSError:
        fds_open = None  # not ours to inspect (the agent runs unprivileged)
    return ProcessStats(pid, read_cmdline(proc, pid), ticks, rss, fds_open, _soft_nofile(base))


def _read_stat(proc: Path, pid: int) -> tuple[int, int]:
    """(ppid, utime+stime in clock ticks), or (-1, 0) when the process is gone."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except OSError:
        return -1, 0
    # The command name in parentheses may hold spaces; the fields after it are fixed.
    fields = text[text.rfind(")") + 2 :].split()
    return int(fields[1]), int(fields[11]) + int(fields[12])


def _soft_nofile(base: Path) -> int | None:
    try:
        for line in (base / "limits").read_text().splitlines():
            if line.startswith("Max open files"):
                soft = line[len("Max open files") :].split()[0]
                return int(soft) if soft.isdigit() else None
    except OSError:
        return None
    return None


def _pct_of_one_core(ticks: int, elapsed: float) -> float:
    """CPU ticks used over `elapsed` seconds as a percent of one core (can exceed 100)."""
    return 100.0 * max(ticks, 0) / _CLOCK_TICKS / elapsed if elapsed > 0 else 0.0


class NginxProcessCollector:
    """Finds the master via its pid file (or a /proc scan) and sums up master plus workers."""

    def __init__(self, pid_file: Path | None = None, proc: Path = Path("/proc")) -> None:
        self.pid_file = pid_file
        self._proc = proc
        self._previous_ticks: dict[int, int] = {}
        self._previous_time = time.monotonic()
        self.master_pid: int | None = None
        self._prime()

    def _prime(self) -> None:
        """Record the CPU ticks nginx has already used, so the first sample shows only new use."""
        master, _ = self.find_master()
        if master is not None:
            pids = [master, *children_of(self._proc, master)]
            stats = [s for s in map(self._read, pids) if s]
            self._previous_ticks = {s.pid: s.cpu_ticks for s in stats}

    def find_master(self) -> tuple[int | None, str | None]:
        """(master pid, None) or (None, why nginx is considered down)."""
        if self.pid_file is None:
            pid = scan_for_master(self._proc)
            return (pid, None) if pid else (None, "no nginx master process found in /proc")
        pid = read_pid_file(self.pid_file)
        if pid is None:
            return None, f"pid file {self.pid_file} is missing or empty"
        if not read_cmdline(self._proc, pid).startswith(_MASTER_TITLE):
            return None, f"pid {pid} from {self.pid_file} is not a running nginx master"
        return pid, None

    def collect(self) -> dict[str, Any]:
        """The `nginx` and `nginx_processes` fragments of a sample."""
        master, error = self.find_master()
        self.master_pid = master
        now = time.monotonic()
        elapsed, self._previous_time = now - self._previous_time, now
        if master is None:
            self._previous_ticks = {}
            return {
                "nginx": {"up": False, "error": error, "master_pid": None, "workers": 0},
                "nginx_processes": None,
            }
        stats = [s for s in map(self._read, [master, *children_of(self._proc, master)]) if s]
        workers = [s for s in stats if s.title.startswith(_WORKER_TITLE)]
        return {
            "nginx": {"up": True, "error": None, "master_pid": master, "workers": len(workers)},
            "nginx_processes": self._summarise(stats, workers, elapsed),
        }

    def _read(self, pid: int) -> ProcessStats | None:
        return read_process(self._proc, pid)

    def _summarise(
        self, stats: list[ProcessStats], workers: list[ProcessStats], elapsed: float
    ) -> dict[str, Any]:
        ticks_now = {s.pid: s.cpu_ticks for s in stats}
        # A pid not seen last time was born during the interval: all of its CPU time is new.
        used = {pid: t - self._previous_ticks.get(pid, 0) for pid, t in ticks_now.items()}
        self._previous_ticks = ticks_now
        cpu_pct = _pct_of_one_core(sum(used.values()), elapsed)
        # The workers alone: what serving traffic (TLS, gzip, proxying) costs, without the
        # master and the cache manager/loader.
        worker_cpu_pct = _pct_of_one_core(sum(used[s.pid] for s in workers), elapsed)
        fd_counts = [s.fds_open for s in stats if s.fds_open is not None]
        worker_fds = [s.fds_open for s in workers if s.fds_open is not None]
        limits = [s.fds_limit for s in (workers or stats) if s.fds_limit is not None]
        return {
            "fds_open": sum(fd_counts) if fd_counts else None,
            "fds_limit": min(limits) if limits else None,
            "rss_bytes": sum(s.rss_bytes for s in stats),
            "cpu_pct": round(cpu_pct, 2),
            "worker_cpu_pct": round(worker_cpu_pct, 2),
            "worker_fds_max": max(worker_fds) if worker_fds else None,
            "worker_fds_limit": min(limits) if limits else None,
        }
