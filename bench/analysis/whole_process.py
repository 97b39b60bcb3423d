"""Whole-process time of `nginx-fleet analyze` on a 300-line config against gixy's, same run.

What a CI job pays per check: interpreter start, imports, reading and analysing the file,
printing the result. Runs, interleaved so both see the same machine load:
  nginx-fleet analyze FILE     (the backend's console script, dispatching to the engine)
  nginx-fleet-analyze FILE     (the engine's own console script)
  gixy FILE                    (pinned, from bench/out/analysis/peers)
  python -c pass               (interpreter start alone, for scale)
on bench/analysis/fleet300.conf (or --config). Prints the medians, the ratio and the targets:
ours at most 0.3 s, at least 3x faster than gixy. Without gixy (no network) it says so and
measures ours alone.
Run from the repository root: .venv/bin/python bench/analysis/whole_process.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from peers import GIXY, ensure_peers

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BIN = Path(sys.executable).parent
CONFIG = HERE / "fleet300.conf"
TARGET_SECONDS = 0.3
TARGET_RATIO = 3.0
# Both tools run with their bytecode caches, as after `pip install` (which compiles them); a
# shell with PYTHONDONTWRITEBYTECODE would make every run recompile every module of both.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU time of one whole process (exit code ignored: linters exit 1 on findings).

    CPU time (user + system of the reaped child) is printed next to the wall time: on a
    shared machine it moves less with the other processes' load.
    """
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, env=ENV)
    return time.perf_counter() - start, _children_cpu() - cpu, done


def main() -> int:
    """Measure, print, and return 1 only when a tool did not do its job (not for a slow run)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31, help="runs of each command (median)")
    parser.add_argument("--quick", action="store_true", help="5 runs, for the harness test")
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--no-gixy", action="store_true", help="measure ours only")
    options = parser.parse_args()
    runs = 5 if options.quick else options.runs
    config = str(options.config)
    lines = options.config.read_text().count("\n")

    commands: dict[str, list[str]] = {
        "nginx-fleet analyze": [str(BIN / "nginx-fleet"), "analyze", config],
        "nginx-fleet-analyze": [str(BIN / "nginx-fleet-analyze"), config],
        "python -c pass": [sys.executable, "-c", "pass"],
    }
    skipped = "--no-gixy" if options.no_gixy else ensure_peers()
    if skipped is None:
        commands["gixy"] = [str(GIXY), config]

    # A warm-up of each (page cache, .pyc files), then the checks on its output.
    outputs = {name: timed(argv)[2] for name, argv in commands.items()}
    ours = outputs["nginx-fleet analyze"]
    report = json.loads(ours.stdout)
    if ours.returncode not in (0, 1) or "findings" not in report:
        print(f"check: nginx-fleet analyze failed: {ours.stderr}")
        return 1
    if "gixy" in outputs and outputs["gixy"].returncode not in (0, 1):
        print(f"check: gixy failed: {outputs['gixy'].stderr[-500:]}")
        return 1

    samples: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            wall, used, _done = timed(argv)
            samples[name].append(wall)
            cpu[name].append(used)
    medians = {name: statistics.median(times) for name, times in samples.items()}
    cpu_medians = {name: statistics.median(times) for name, times in cpu.items()}

    print(f"input: {options.config.name}, {lines} lines; ours: {len(report['findings'])} findings")
    print(f"whole process, median of {runs} interleaved runs (bytecode caches on):")
    print(f"  {'':22s} {'wall':>8s}      {'cpu':>8s}      wall min / max")
    for name, seconds in medians.items():
        spread = f"{min(samples[name]) * 1000:.0f} / {max(samples[name]) * 1000:.0f} ms"
        used = cpu_medians[name] * 1000
        print(f"  {name:22s} {seconds * 1000:8.1f} ms   {used:8.1f} ms   {spread}")
    ours_s = medians["nginx-fleet analyze"]
    met = "met" if ours_s <= TARGET_SECONDS else "NOT MET"
    print(f"target nginx-fleet analyze <= {TARGET_SECONDS} s: {met}")
    if "gixy" in medians:
        ratio = medians["gixy"] / ours_s
        met = "met" if ratio >= TARGET_RATIO else "NOT MET"
        print(f"ratio gixy / nginx-fleet analyze: {ratio:.1f}x")
        cpu_ratio = cpu_medians["gixy"] / cpu_medians["nginx-fleet analyze"]
        print(f"ratio gixy / nginx-fleet analyze in CPU time: {cpu_ratio:.1f}x")
        print(f"target >= {TARGET_RATIO:.0f}x faster than gixy: {met}")
    else:
        print(f"gixy: not measured ({skipped})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
