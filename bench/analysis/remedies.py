"""Recommended diffs for every fixable finding of the 5,000-line dump, against a plain analysis.

Generates the dump of run.py (200 server blocks), then times, in the same run, the median of
several repetitions of a plain analysis (parse + all rules) and of `remedy.recommend` given that
analysis (the checked diff of every fixable finding: edits, diffs, the batched re-analysis and
its splits). Target (issue 8): generating and self-checking the diffs under 3x the analysis
time. Also times the two together (`recommend` from the dump alone) and one `remedy.propose`
(a single finding's full check, as the control plane runs it when an operator previews or
approves).
Run from the repository root: .venv/bin/python bench/analysis/remedies.py [--quick]
"""

from __future__ import annotations

import argparse

from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.loader import parse_dump
from nginx_fleet_analyzer.remedy import applicable, propose, recommend
from run import REPEATS, generate, median_seconds

TARGET_RATIO = 3.0


def main() -> None:
    """Generate, measure and print the figures and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 runs each, for the harness test")
    options = parser.parse_args()
    repeats = 2 if options.quick else REPEATS
    _, dump, lines = generate()
    report = analyze(parse_dump(dump))
    fixable = [f for f in report.findings if applicable(f)]
    proposals = recommend(dump)
    offered = sum(p.ok for p in proposals)
    plain = median_seconds(lambda: analyze(parse_dump(dump)), repeats)
    config = parse_dump(dump)
    analysed = (config, analyze(config))
    diffs = median_seconds(lambda: recommend(dump, analysed=analysed), repeats)
    both = median_seconds(lambda: recommend(dump), repeats)
    one = median_seconds(lambda: propose(dump, [fixable[0].key]), repeats)
    print(f"input: {lines} lines, {len(report.findings)} findings, {len(fixable)} fixable")
    print(f"offered: {offered} diffs; not offered: {len(proposals) - offered}")
    for proposal in proposals:
        if not proposal.ok:
            fields = proposal.to_dict()
            print(f"  {fields['keys'][0]}: {fields['reason']}")  # type: ignore[index]
    print(f"median of {repeats} runs, in process:")
    print(f"  plain analysis (parse + rules)     {plain * 1000:8.1f} ms")
    print(f"  every fixable finding's diff       {diffs * 1000:8.1f} ms")
    print(f"  analysis and diffs, from the dump  {both * 1000:8.1f} ms")
    print(f"  one finding's diff (propose)       {one * 1000:8.1f} ms")
    ratio = diffs / plain
    met = "met" if ratio < TARGET_RATIO else "NOT MET"
    print(f"ratio diffs / analysis: {ratio:.1f}x (target < {TARGET_RATIO:g}x): {met}")
    print(f"ratio analysis and diffs / analysis: {both / plain:.1f}x")


if __name__ == "__main__":
    main()
