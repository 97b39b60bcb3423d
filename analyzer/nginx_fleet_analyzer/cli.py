"""`nginx-fleet-analyze PATH|-` (also `nginx-fleet analyze`): analyse a dump or a config file."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from nginx_fleet_analyzer.engine import Report, analyze
from nginx_fleet_analyzer.facts import HostFacts, parse_version
from nginx_fleet_analyzer.loader import parse_auto, parse_path, read_text

USAGE_ERROR = 2


def _arguments(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check an nginx config (an `nginx -T` dump or one file) against the "
        "tuning rules. Exit code 1 when any error finding exists.",
    )
    parser.add_argument("path", help="config file or nginx -T dump; '-' reads stdin")
    parser.add_argument("--nginx-version", help="the nginx version the config runs on, X.Y.Z")
    parser.add_argument("--format", choices=("json", "text"), default="json")
    return parser


def _render_text(report: Report, out: TextIO) -> None:
    for finding in report.findings:
        out.write(
            f"{finding.file}:{finding.line}: {finding.severity} {finding.rule}: {finding.message}\n"
        )
    categories = ", ".join(f"{name} {value}" for name, value in report.score.categories.items())
    out.write(f"score {report.score.overall}/100 ({categories})\n")
    for failure in report.failures:
        out.write(f"internal error in rule {failure.rule}: {failure.error}\n")


def main(argv: Sequence[str] | None = None, prog: str = "nginx-fleet-analyze") -> int:
    """Entry point; returns the exit code (0 clean, 1 error findings, 2 usage error)."""
    parser = _arguments(prog)
    try:
        options = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else USAGE_ERROR
    version = None
    if options.nginx_version is not None:
        version = parse_version(options.nginx_version)
        if version is None:
            print(f"--nginx-version: not a version: {options.nginx_version!r}", file=sys.stderr)
            return USAGE_ERROR
    try:
        if options.path == "-":
            config = parse_auto(read_text(sys.stdin.buffer.read()), "stdin")
        else:
            config = parse_path(options.path)
    except OSError as exc:
        print(f"cannot read {options.path}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE_ERROR
    facts = HostFacts(nginx_version=version) if version is not None else None
    report = analyze(config, facts)
    if options.format == "json":
        json.dump(report.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _render_text(report, sys.stdout)
    return 1 if report.has_errors else 0


if __name__ == "__main__":
    sys.exit(main())
