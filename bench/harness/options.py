"""Command-line options of the benchmarks that scale with a number of hosts."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class HostsOptions:
    """Knobs of one run: --quick, and how many hosts' rows are written."""

    quick: bool
    hosts: int


def parse_hosts_options(
    argv: Sequence[str] | None, *, description: str, what: str, quick: int, default: int
) -> HostsOptions:
    """--quick and --hosts N (default `default`, `quick` with --quick; at least 1)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=f"{quick:,} hosts")
    parser.add_argument("--hosts", type=int, help=f"{what} ({default:,})")
    args = parser.parse_args(argv)
    hosts = args.hosts if args.hosts is not None else (quick if args.quick else default)
    if hosts < 1:
        parser.error(f"--hosts must be >= 1, got {hosts}")
    return HostsOptions(quick=args.quick, hosts=hosts)
