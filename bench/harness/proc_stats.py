"""CPU time and resident memory of a process, read from /proc."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class CpuTimes:
    """CPU seconds of a process: its own and those of children it has waited for."""

    own_s: float
    children_s: float

    @property
    def total_s(self) -> float:
        """Own plus reaped children's CPU seconds (an agent's `nginx -T` runs are its cost)."""
        return self.own_s + self.children_s


def cpu_times(pid: int) -> CpuTimes:
    """utime+stime and cutime+cstime of `pid` from /proc/PID/stat."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    # The command name may contain spaces and parentheses: fields start after the last ')'.
    fields = raw[raw.rindex(")") + 2 :].split()
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return CpuTimes(own_s=(utime + stime) / CLOCK_TICKS, children_s=(cutime + cstime) / CLOCK_TICKS)


def _status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise LookupError(f"/proc/{pid}/status has no {key} line")


def peak_rss_bytes(pid: int) -> int:
    """Peak resident set size (VmHWM) of `pid` in bytes."""
    return _status_kib(pid, "VmHWM") * 1024


def rss_bytes(pid: int) -> int:
    """Current resident set size (VmRSS) of `pid` in bytes."""
    return _status_kib(pid, "VmRSS") * 1024


def mib(value: int) -> str:
    """Bytes as MiB with one decimal."""
    return f"{value / 1048576:.1f} MiB"
