"""The analysis benchmarks run end to end, briefly: in-process on the 5,000-line dump, and whole
processes of `nginx-fleet analyze` against gixy on the 300-line config."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ANALYSIS = Path(__file__).resolve().parent.parent / "analysis"


def run_bench(name: str, *args: str) -> str:
    """Run bench/analysis/NAME with the repository's Python; its stdout (it must succeed)."""
    done = subprocess.run(
        [sys.executable, str(ANALYSIS / name), *args],
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _ms(out: str, label: str) -> float:
    match = re.search(rf"^  {re.escape(label)}\s+([\d.]+) ms", out, re.MULTILINE)
    assert match is not None, out
    return float(match[1])


def test_in_process_bench_analyses_the_5000_line_dump() -> None:
    out = run_bench("run.py", "--quick", "--no-peers")
    assert "input: 5478 lines, 200 server blocks, 202 files" in out
    assert _ms(out, "ours parse + all rules") > 0
    assert "target full analysis < 0.3 s:" in out


def test_whole_process_bench_times_our_command() -> None:
    out = run_bench("whole_process.py", "--quick", "--no-gixy")
    assert "input: fleet300.conf" in out
    assert _ms(out, "nginx-fleet analyze") > _ms(out, "python -c pass") > 0
    assert "target nginx-fleet analyze <= 0.3 s:" in out
    assert "gixy: not measured (--no-gixy)" in out


def test_whole_process_bench_compares_with_gixy() -> None:
    out = run_bench("whole_process.py", "--quick")
    if "gixy: not measured" in out:
        reason = out.split("gixy: not measured", 1)[1].strip()
        pytest.skip(f"gixy could not be installed into bench/out/analysis/peers: {reason}")
    assert _ms(out, "gixy") > 0
    assert re.search(r"^ratio gixy / nginx-fleet analyze: [\d.]+x$", out, re.MULTILINE), out


def test_remedies_bench_checks_every_fixable_finding_of_the_dump() -> None:
    out = run_bench("remedies.py", "--quick")
    assert re.search(r"^input: 5478 lines, \d+ findings, \d+ fixable$", out, re.MULTILINE)
    offered = re.search(r"^offered: (\d+) diffs", out, re.MULTILINE)
    assert offered is not None and int(offered[1]) > 0, out
    assert _ms(out, "plain analysis (parse + rules)") > 0
    assert _ms(out, "every fixable finding's diff") > 0
    assert "ratio diffs / analysis:" in out
