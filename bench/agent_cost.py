"""Agent cost: CPU per collection cycle and peak RSS of the real agent against a real nginx.

Starts nginx on a free loopback port (own prefix, stub_status location, light steady traffic),
a stand-in control plane on loopback, and `nginx-fleet-agent run` with a short push interval;
measures the agent's CPU seconds per cycle from /proc, extrapolates to a 10 s interval and reads
its peak RSS. Baselines in the same window: an idle Python interpreter, and one that has only
imported the agent's modules. Run: .venv/bin/python bench/agent_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.agent_process import enroll, running_agent, write_agent_config
from harness.net import free_port
from harness.nginx_instance import running_nginx
from harness.proc_stats import cpu_times, mib, peak_rss_bytes
from harness.processes import ManagedProcess, raise_sigterm_as_exit, running
from harness.sink import SinkRecord, running_sink
from harness.stats import verdict

TARGET_CORE_PCT_AT_10S = 1.0
TARGET_PEAK_RSS_BYTES = 50 * 1024 * 1024
PRODUCTION_INTERVAL_S = 10.0
PACED_SCRIPT = Path(__file__).resolve().parent / "lua" / "paced.lua"
IDLE_CODE = "import time; time.sleep(86400)"
IMPORTS_CODE = "import nginx_fleet_agent.cli, time; time.sleep(86400)"


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    quick: bool
    duration_s: float
    interval_s: float
    nginx_rps: int


@dataclass(frozen=True)
class Window:
    """CPU used by one process between two readings, and its peak RSS at the end."""

    cpu_s: float
    peak_rss: int


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options; --quick measures 15 s instead of 60 s."""
    parser = argparse.ArgumentParser(description="nginx-fleet agent cost benchmark")
    parser.add_argument("--quick", action="store_true", help="measure 15 s instead of 60 s")
    parser.add_argument("--duration", type=float, help="seconds measured (60, quick 15)")
    parser.add_argument("--interval", type=float, default=1.0, help="agent push interval (1 s)")
    parser.add_argument("--nginx-rps", type=int, default=100, help="traffic to nginx (100/s)")
    args = parser.parse_args(argv)
    duration = args.duration if args.duration is not None else (15.0 if args.quick else 60.0)
    if duration <= 0 or args.nginx_rps < 1:
        parser.error("--duration and --nginx-rps must be positive")
    if args.interval < 1.0:
        parser.error("--interval must be >= 1 (the agent's minimum)")
    return Options(
        quick=args.quick, duration_s=duration, interval_s=args.interval, nginx_rps=args.nginx_rps
    )


def wait_for_samples(sink: SinkRecord, agent: ManagedProcess, count: int, timeout_s: float) -> None:
    """Block until the sink holds `count` samples; fail with the agent's log otherwise."""
    deadline = time.monotonic() + timeout_s
    while sink.sample_count() < count:
        if not agent.alive():
            raise RuntimeError(f"agent exited early; its log ends with:\n{agent.log_tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"agent pushed {sink.sample_count()} samples in {timeout_s:.0f} s, expected "
                f"{count}; rejected: {sink.rejected}; its log ends with:\n{agent.log_tail()}"
            )
        time.sleep(0.05)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its figures; exit 1 when the agent's samples are wrong."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    with tempfile.TemporaryDirectory(prefix="nf-bench-agent-") as tmp_name:
        tmp = Path(tmp_name)
        port = free_port()
        server_url = f"http://127.0.0.1:{port}"
        with (
            running_nginx(tmp / "nginx") as nginx,
            running_sink(port, push_interval_s=int(options.interval_s)) as sink,
            running(
                "traffic",
                [
                    "wrk",
                    "--threads=1",
                    "--connections=1",
                    "--duration=1h",
                    "--timeout=5s",
                    f"--script={PACED_SCRIPT}",
                    f"http://127.0.0.1:{nginx.port}/",
                    "--",
                    str(max(1, 1000 // options.nginx_rps)),
                ],
                log_path=tmp / "traffic.log",
            ),
            running(
                "idle-python", [sys.executable, "-c", IDLE_CODE], log_path=tmp / "idle.log"
            ) as idle,
            running(
                "imports-python", [sys.executable, "-c", IMPORTS_CODE], log_path=tmp / "imp.log"
            ) as imports,
        ):
            config = tmp / "agent.toml"
            write_agent_config(
                config,
                server_url=server_url,
                state_dir=tmp / "agent-state",
                nginx=nginx,
                push_interval_s=options.interval_s,
            )
            enroll(config, server_url=server_url, token="nfe_bench_sink")
            with running_agent(config, log_path=tmp / "agent.log") as agent:
                # Startup (imports, nginx -V, nginx -T, first push) is reported, not averaged in.
                wait_for_samples(sink, agent, count=3, timeout_s=60)
                startup_cpu = cpu_times(agent.pid).total_s
                processes = {"agent": agent, "idle": idle, "imports": imports}
                cpu_before = {name: cpu_times(p.pid).total_s for name, p in processes.items()}
                samples_before, began = sink.sample_count(), time.monotonic()
                time.sleep(options.duration_s)
                cycles, elapsed = sink.sample_count() - samples_before, time.monotonic() - began
                windows = {
                    name: Window(
                        cpu_s=cpu_times(p.pid).total_s - cpu_before[name],
                        peak_rss=peak_rss_bytes(p.pid),
                    )
                    for name, p in processes.items()
                }
            pushes = list(sink.pushes)
    checks = sample_checks(pushes)
    print_report(options, startup_cpu, cycles, elapsed, windows, checks)
    return 0 if all(ok for _, ok in checks) and cycles > 0 else 1


def sample_checks(pushes: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """Did the agent really measure nginx: up, stub_status read, seqs consecutive."""
    samples = [sample for push in pushes for sample in push.get("samples", [])]
    seqs = [sample["seq"] for sample in samples]
    requests = [
        s["stub_status"].get("requests", 0) for s in samples if s["stub_status"]["available"]
    ]
    return [
        (f"{len(samples)} samples received", bool(samples)),
        ("nginx up in every sample", all(s["nginx"]["up"] for s in samples)),
        ("stub_status read in every sample", len(requests) == len(samples)),
        (
            "stub_status requests counter grows",
            requests == sorted(requests) and requests[-1] > requests[0],
        ),
        ("seqs consecutive", seqs == list(range(seqs[0], seqs[0] + len(seqs))) if seqs else False),
    ]


def print_report(
    options: Options,
    startup_cpu_s: float,
    cycles: int,
    elapsed_s: float,
    windows: dict[str, Window],
    checks: list[tuple[str, bool]],
) -> None:
    """Print the per-cycle cost, the extrapolation, the baselines, the targets and the checks."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    agent, idle, imports = windows["agent"], windows["idle"], windows["imports"]
    print(f"nginx-fleet agent cost benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        f"setup: nginx 1.22.1 on 127.0.0.1 (2 workers, ~{options.nginx_rps} req/s of traffic); "
        f"`nginx-fleet-agent run` pushing every {options.interval_s:g} s to a loopback sink; "
        f"{elapsed_s:.1f} s measured after startup"
    )
    if cycles == 0:
        print("no cycle completed in the measured window")
        return
    per_cycle = agent.cpu_s / cycles
    core_pct = 100.0 * per_cycle / PRODUCTION_INTERVAL_S
    print(f"agent startup (imports, nginx -V, nginx -T, first pushes): {startup_cpu_s:.2f} CPU s")
    print(
        f"agent: {cycles} cycles (collect + push), {agent.cpu_s:.2f} CPU s -> "
        f"{per_cycle * 1000:.2f} ms CPU per cycle"
    )
    print(f"agent at a 10 s interval: {core_pct:.3f}% of one core (extrapolated per cycle)")
    print(
        f"baseline idle python: {idle.cpu_s:.2f} CPU s in the window, "
        f"peak RSS {mib(idle.peak_rss)}; "
        f"python with the agent's modules imported: {imports.cpu_s:.2f} CPU s, "
        f"peak RSS {mib(imports.peak_rss)}"
    )
    print(
        f"agent peak RSS {mib(agent.peak_rss)} = idle interpreter + "
        f"{mib(imports.peak_rss - idle.peak_rss)} imports + "
        f"{mib(agent.peak_rss - imports.peak_rss)} at work"
    )
    print(
        f"target < {TARGET_CORE_PCT_AT_10S:g}% of a core at 10 s: "
        f"{verdict(core_pct < TARGET_CORE_PCT_AT_10S)}"
    )
    print(
        f"target peak RSS < {mib(TARGET_PEAK_RSS_BYTES)}: "
        f"{verdict(agent.peak_rss < TARGET_PEAK_RSS_BYTES)}"
    )
    for label, ok in checks:
        print(f"check: {label}: {'OK' if ok else 'FAILED'}")


if __name__ == "__main__":
    sys.exit(main())
