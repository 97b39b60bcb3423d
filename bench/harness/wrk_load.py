"""Run wrk with the agent-load Lua script and read back what it counted."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LUA_SCRIPT = Path(__file__).resolve().parent.parent / "lua" / "agent_load.lua"


@dataclass(frozen=True)
class HostCredentials:
    """What the load generator needs to act as one enrolled agent."""

    host_id: int
    agent_id: str
    hostname: str
    host_token: str
    first_seq: int


@dataclass(frozen=True)
class LoadResult:
    """Figures of one wrk run, as counted by wrk and by the Lua script."""

    mode: str
    duration_s: float
    sent: int
    responses: int
    ok: int
    accepted: int
    duplicates: int
    statuses: dict[str, int]
    socket_errors: dict[str, int]
    latency_p50_s: float
    latency_p90_s: float
    latency_p99_s: float
    latency_max_s: float
    first_failure: str
    generator_cpu_s: float

    @property
    def ok_per_s(self) -> float:
        """2xx replies per second."""
        return self.ok / self.duration_s

    @property
    def in_flight_at_end(self) -> int:
        """Requests written but not answered when wrk stopped at its deadline."""
        return self.sent - self.responses

    @property
    def generator_core_pct(self) -> float:
        """CPU the generator used, in % of one core over the run."""
        return 100.0 * self.generator_cpu_s / self.duration_s


def write_hosts_file(path: Path, hosts: list[HostCredentials]) -> None:
    """One tab-separated line per host, in the form the Lua script reads."""
    path.write_text(
        "".join(f"{h.agent_id}\t{h.hostname}\t{h.host_token}\t{h.first_seq}\n" for h in hosts)
    )


def run_agent_load(
    *,
    mode: str,
    base_url: str,
    hosts_file: Path,
    template_file: Path,
    results_file: Path,
    base_epoch: int,
    duration_s: int,
    connections: int,
    threads: int = 1,
) -> LoadResult:
    """Drive `mode` (push or ping) for `duration_s` and return the counted results."""
    if mode not in ("push", "ping"):
        raise ValueError(f"mode must be push or ping, got {mode!r}")
    if not base_url.startswith("http://127."):
        raise ValueError(f"load goes to loopback only, got {base_url}")
    results_file.unlink(missing_ok=True)
    argv = [
        "wrk",
        f"--threads={threads}",
        f"--connections={connections}",
        f"--duration={duration_s}s",
        "--timeout=10s",
        f"--script={LUA_SCRIPT}",
        base_url,
        "--",
        mode,
        str(hosts_file),
        str(template_file),
        str(base_epoch),
        str(results_file),
        str(threads),
    ]
    raw, cpu_s = run_wrk(argv, results_file)
    return _parse_results(mode, raw, cpu_s)


def run_wrk(argv: list[str], results_file: Path) -> tuple[dict[str, Any], float]:
    """Run wrk to its end; the JSON its script wrote to results_file and wrk's own CPU seconds."""
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        # wait4 gives the generator's own CPU time, to show it is not the bottleneck.
        _, status, usage = os.wait4(popen.pid, 0)
    except BaseException:
        popen.kill()
        popen.wait()
        raise
    popen.returncode = os.waitstatus_to_exitcode(status)
    output = popen.stdout.read().decode(errors="replace") if popen.stdout else ""
    if popen.returncode != 0 or not results_file.exists():
        raise RuntimeError(f"wrk failed with exit code {popen.returncode}:\n{output}")
    return json.loads(results_file.read_text()), usage.ru_utime + usage.ru_stime


def _parse_results(mode: str, raw: dict[str, object], generator_cpu_s: float) -> LoadResult:
    threads = raw["threads"]
    latency = raw["latency_us"]
    errors = raw["errors"]
    assert isinstance(threads, list) and isinstance(latency, dict) and isinstance(errors, dict)
    statuses: Counter[str] = Counter()
    for thread in threads:
        statuses.update(thread["statuses"])
    failures = [t["first_failure"] for t in threads if t["first_failure"]]
    duration_us = raw["duration_us"]
    assert isinstance(duration_us, int)
    return LoadResult(
        mode=mode,
        duration_s=duration_us / 1e6,
        sent=sum(t["sent"] for t in threads),
        responses=sum(t["responses"] for t in threads),
        ok=sum(t["ok"] for t in threads),
        accepted=sum(t["accepted"] for t in threads),
        duplicates=sum(t["duplicates"] for t in threads),
        statuses=dict(statuses),
        socket_errors={k: int(v) for k, v in errors.items() if k != "status"},
        latency_p50_s=latency["p50"] / 1e6,
        latency_p90_s=latency["p90"] / 1e6,
        latency_p99_s=latency["p99"] / 1e6,
        latency_max_s=latency["max"] / 1e6,
        first_failure=failures[0] if failures else "",
        generator_cpu_s=generator_cpu_s,
    )


def epoch_hours_ago(hours: float) -> int:
    """Unix time `hours` before now: where the generated samples' clock starts."""
    return int(time.time() - hours * 3600)
