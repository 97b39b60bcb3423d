"""Machine-wide CPU use from /proc/stat, to show how busy the box was during a run."""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def busy_cpu_seconds() -> float:
    """CPU seconds spent outside idle and iowait on all cores since boot."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(value) for value in fields]
    # user nice system idle iowait irq softirq steal (guest time is already in user).
    idle = ticks[3] + ticks[4]
    return (sum(ticks[:8]) - idle) / CLOCK_TICKS


def core_count() -> int:
    """Cores this process may run on."""
    return len(os.sched_getaffinity(0))
