"""Host metrics from /proc: CPU, memory, load, network bytes, TCP states, listen-queue drops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Kernel socket states (include/net/tcp_states.h), as hex in /proc/net/tcp.
_TCP_STATES = {
    "01": "ESTABLISHED",
    "02": "SYN_SENT",
    "03": "SYN_RECV",
    "04": "FIN_WAIT1",
    "05": "FIN_WAIT2",
    "06": "TIME_WAIT",
    "07": "CLOSE",
    "08": "CLOSE_WAIT",
    "09": "LAST_ACK",
    "0A": "LISTEN",
    "0B": "CLOSING",
    "0C": "NEW_SYN_RECV",
}
# user nice system idle iowait irq softirq steal; guest time is already inside user.
_CPU_FIELDS = 8
_IDLE, _IOWAIT = 3, 4


def read_cpu_times(proc: Path) -> dict[str, list[int]]:
    """Jiffies per CPU line of /proc/stat ("cpu" is the total, "cpu0"... the cores)."""
    times: dict[str, list[int]] = {}
    for line in (proc / "stat").read_text().splitlines():
        if not line.startswith("cpu"):
            break
        name, *values = line.split()
        times[name] = [int(v) for v in values[:_CPU_FIELDS]]
    return times


def cpu_percentages(before: list[int], after: list[int]) -> tuple[float, float]:
    """(busy %, iowait %) of one CPU line between two readings."""
    deltas = [max(b - a, 0) for a, b in zip(before, after, strict=False)]
    total = sum(deltas)
    if total == 0:
        return 0.0, 0.0
    idle = deltas[_IDLE] + deltas[_IOWAIT]
    return round(100.0 * (total - idle) / total, 2), round(100.0 * deltas[_IOWAIT] / total, 2)


def read_memory(proc: Path) -> dict[str, int]:
    """Memory figures in bytes from /proc/meminfo."""
    info: dict[str, int] = {}
    for line in (proc / "meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            info[key] = int(parts[0]) * (1024 if len(parts) > 1 else 1)
    total = info.get("MemTotal", 0)
    available = info.get("MemAvailable", info.get("MemFree", 0))
    return {
        "total_bytes": total,
        "available_bytes": available,
        "used_bytes": max(total - available, 0),
        "swap_used_bytes": max(info.get("SwapTotal", 0) - info.get("SwapFree", 0), 0),
    }


def read_load(proc: Path) -> dict[str, float]:
    """Load averages from /proc/loadavg."""
    load1, load5, load15 = (proc / "loadavg").read_text().split()[:3]
    return {"load1": float(load1), "load5": float(load5), "load15": float(load15)}


def read_network(proc: Path) -> dict[str, int]:
    """Received and sent bytes summed over every interface, loopback included."""
    rx = tx = 0
    for line in (proc / "net" / "dev").read_text().splitlines()[2:]:
        _, _, counters = line.partition(":")
        fields = counters.split()
        if len(fields) >= 9:
            rx += int(fields[0])
            tx += int(fields[8])
    return {"rx_bytes": rx, "tx_bytes": tx}


def read_tcp_states(proc: Path) -> dict[str, int]:
    """Number of IPv4 and IPv6 TCP sockets per state."""
    counts: dict[str, int] = {}
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / name).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue  # IPv6 disabled on this host
        for line in lines:
            fields = line.split(None, 4)
            if len(fields) >= 4:
                state = _TCP_STATES.get(fields[3], fields[3])
                counts[state] = counts.get(state, 0) + 1
    return counts


def read_listen_drops(proc: Path) -> dict[str, int]:
    """Cumulative TcpExt ListenOverflows and ListenDrops from /proc/net/netstat."""
    lines = (proc / "net" / "netstat").read_text().splitlines()
    for header, values in zip(lines[::2], lines[1::2], strict=False):
        if header.startswith("TcpExt:"):
            table = dict(zip(header.split()[1:], values.split()[1:], strict=False))
            return {
                "listen_overflows": int(table.get("ListenOverflows", 0)),
                "listen_drops": int(table.get("ListenDrops", 0)),
            }
    return {"listen_overflows": 0, "listen_drops": 0}


class SystemCollector:
    """Host metrics; CPU percentages cover the time since the previous `collect`."""

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self._proc = proc
        self._previous_cpu = read_cpu_times(proc)

    def collect(self) -> dict[str, Any]:
        """Read every /proc source once."""
        cpu_now = read_cpu_times(self._proc)
        before, self._previous_cpu = self._previous_cpu, cpu_now
        total_pct, iowait_pct = cpu_percentages(before.get("cpu", []), cpu_now.get("cpu", []))
        cores = sorted((k for k in cpu_now if k != "cpu"), key=lambda k: int(k[3:]))
        per_core = [cpu_percentages(before.get(k, cpu_now[k]), cpu_now[k])[0] for k in cores]
        return {
            "system": {
                "cpu": {"total_pct": total_pct, "per_core_pct": per_core, "iowait_pct": iowait_pct},
                "memory": read_memory(self._proc),
                "load": read_load(self._proc),
                "network": read_network(self._proc),
                "tcp_states": read_tcp_states(self._proc),
                "netstat": read_listen_drops(self._proc),
            }
        }
