"""`nginx-fleet-analyze PATH|-` (also `nginx-fleet analyze`): analyse a dump or a config file."""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
from collections.abc import Sequence

from nginx_fleet_analyzer.context import CONTEXTS
from nginx_fleet_analyzer.engine import Report, analyze
from nginx_fleet_analyzer.facts import HostFacts, parse_version
from nginx_fleet_analyzer.findings import Finding, Severity
from nginx_fleet_analyzer.loader import AUTO, parse_auto, parse_path, read_text
from nginx_fleet_analyzer.model import ParsedConfig
from nginx_fleet_analyzer.record import replace

# Not `from typing import TYPE_CHECKING`: importing typing costs every CLI run ~5 ms, and mypy
# and ruff read a module-level TYPE_CHECKING name as typing's.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn, TextIO

CLEAN = 0
FINDINGS = 1
USAGE_ERROR = 2
RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}
SEVERITIES = ("info", "warning", "error")
# Compiled by re on first use (only --memory needs it).
_SIZE = r"(?i)^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$"
_SIZE_FACTORS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}

EPILOG = """\
input:
  PATH is an `nginx -T` dump (recognised by its "# configuration file" headers) or one config
  file; files it includes are read from disk. A file whose top level is server/upstream/map
  (a site file) is read as if included in http, one of location/listen/... as if included in
  a server: --context names it when the guess is wrong. Settings of the unseen nginx.conf
  are then reported as info, "undecided". Includes that cannot be read are noted (V-unknown:
  info for files, warning in a dump), not errors.

host facts:
  Without facts, rules that depend on the host (CPU count, the workers' fd limit, memory)
  stay at info. --facts takes the agent's facts JSON (the object, or a push with "facts");
  --cpus, --nofile, --memory and --nginx-version override single values.

exit codes:
  0  no finding at or above --fail-on (default: error)
  1  at least one finding at or above --fail-on (counted before --min-severity filters)
  2  usage error, unreadable input or facts file
"""


def _count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(text)


def parse_memory(text: str) -> int:
    """'4G', '512M', '2GiB', '1073741824' -> bytes (binary units, as nginx and free(1) use)."""
    match = re.match(_SIZE, text)
    if match is None or float(match[1]) <= 0:
        raise argparse.ArgumentTypeError(f"not a memory size such as 4G or 512M: {text!r}")
    return int(float(match[1]) * _SIZE_FACTORS[match[2].lower()])


def _terminal_columns() -> int:
    """shutil.get_terminal_size().columns without importing shutil."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, sized without shutil: argparse makes one for every add_argument,
    and the first one imports shutil (with zlib, bz2, lzma: ~2.5 ms of every run)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _arguments(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check an nginx config (an `nginx -T` dump or one file) against the "
        "tuning and security rules.",
        epilog=EPILOG,
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("path", help="config file or nginx -T dump; '-' reads stdin")
    parser.add_argument(
        "--context",
        choices=(AUTO, *CONTEXTS),
        default=AUTO,
        help="the block a lone file is included in (default: guessed from its top level; "
        "ignored for dumps)",
    )
    parser.add_argument("--format", choices=("json", "text", "sarif"), default="json")
    parser.add_argument(
        "--min-severity",
        choices=SEVERITIES,
        default="info",
        help="show only findings at or above this severity (the score counts all)",
    )
    parser.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        default="error",
        help="exit 1 when a finding at or above this severity exists (default: error)",
    )
    parser.add_argument("--nginx-version", help="the nginx version the config runs on, X.Y.Z")
    parser.add_argument("--cpus", type=_count, help="CPU count of the host")
    parser.add_argument("--nofile", type=_count, help="the workers' open-file limit")
    parser.add_argument("--memory", type=parse_memory, help="host memory, e.g. 4G or 512M")
    parser.add_argument("--facts", metavar="FILE", help="facts JSON as the agent sends it")
    return parser


class _InputError(Exception):
    """Unreadable input or facts: exit code 2 with this message."""


def _load_facts(options: argparse.Namespace) -> HostFacts | None:
    facts: HostFacts | None = None
    if options.facts is not None:
        try:
            with open(options.facts, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as exc:
            raise _InputError(f"--facts {options.facts}: {exc}") from exc
        if isinstance(data, dict) and isinstance(data.get("facts"), dict):
            data = _facts_of_push(data)
        if not isinstance(data, dict):
            raise _InputError(f"--facts {options.facts}: not a JSON object")
        facts = HostFacts.from_dict(data)
    overrides: dict[str, object] = {}
    if options.nginx_version is not None:
        version = parse_version(options.nginx_version)
        if version is None:
            raise _InputError(f"--nginx-version: not a version: {options.nginx_version!r}")
        overrides["nginx_version"] = version
    for option, name in (
        ("cpus", "cpu_count"),
        ("nofile", "worker_nofile_limit"),
        ("memory", "mem_total_bytes"),
    ):
        if getattr(options, option) is not None:
            overrides[name] = getattr(options, option)
    if overrides:
        facts = replace(facts or HostFacts(), **overrides)
    return facts


def _facts_of_push(push: dict[str, object]) -> dict[str, object]:
    """The facts of an agent push, with the workers' fd limit of its latest sample that has one.

    The agent reports the limit with each sample (nginx_processes.worker_fds_limit), not in
    the facts, since it changes when nginx restarts.
    """
    given = push["facts"]
    facts: dict[str, object] = dict(given) if isinstance(given, dict) else {}
    samples = push.get("samples")
    if "worker_fds_limit" in facts or not isinstance(samples, list):
        return facts
    for sample in reversed(samples):
        processes = sample.get("nginx_processes") if isinstance(sample, dict) else None
        if isinstance(processes, dict) and processes.get("worker_fds_limit") is not None:
            facts["worker_fds_limit"] = processes["worker_fds_limit"]
            break
    return facts


def _load_config(options: argparse.Namespace) -> ParsedConfig:
    try:
        if options.path == "-":
            return parse_auto(read_text(sys.stdin.buffer.read()), "stdin", options.context)
        return parse_path(options.path, options.context)
    except OSError as exc:
        raise _InputError(f"cannot read {options.path}: {exc.strerror or exc}") from exc


def _counts(findings: list[Finding]) -> dict[str, int]:
    return {level: sum(1 for f in findings if f.severity == level) for level in SEVERITIES}


def _render_text(report: Report, shown: list[Finding], config: ParsedConfig, out: TextIO) -> None:
    if config.partial:
        out.write(
            f"{config.main_file}: read alone, as if included in {config.context} context "
            "(the nginx.conf that includes it is not analysed)\n"
        )
    for finding in shown:
        out.write(
            f"{finding.file}:{finding.line}: {finding.severity} {finding.rule}: {finding.message}\n"
        )
    counts = ", ".join(f"{n} {level}" for level, n in _counts(report.findings).items())
    categories = ", ".join(f"{name} {value}" for name, value in report.score.categories.items())
    out.write(f"{counts}; score {report.score.overall}/100 ({categories})\n")
    for failure in report.failures:
        out.write(f"internal error in rule {failure.rule}: {failure.error}\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nginx-fleet-analyzer")
    except PackageNotFoundError:
        return "0+unknown"


def _write(report: Report, shown: list[Finding], config: ParsedConfig, fmt: str) -> None:
    out = sys.stdout
    if fmt == "text":
        _render_text(report, shown, config, out)
        return
    if fmt == "sarif":
        from nginx_fleet_analyzer.rules import all_rules
        from nginx_fleet_analyzer.sarif import to_sarif

        document = to_sarif(report, shown, all_rules(), config, _version())
    else:
        document = report.to_dict()
        document["findings"] = [f.to_dict() for f in shown]
        document["context"] = config.context
        document["partial"] = config.partial
        document["counts"] = _counts(report.findings)
    json.dump(document, out, indent=2)
    out.write("\n")


def main(argv: Sequence[str] | None = None, prog: str = "nginx-fleet-analyze") -> int:
    """Entry point; returns the exit code (see EPILOG: 0 clean, 1 findings, 2 usage error)."""
    parser = _arguments(prog)
    try:
        options = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else USAGE_ERROR
    try:
        facts = _load_facts(options)
        config = _load_config(options)
    except _InputError as exc:
        print(exc, file=sys.stderr)
        return USAGE_ERROR
    report = analyze(config, facts)
    floor = RANK[Severity(options.min_severity)]
    shown = [f for f in report.findings if RANK[f.severity] >= floor]
    try:
        _write(report, shown, config, options.format)
    except BrokenPipeError:
        # A reader that stopped early (`| head`) is not an error of the analysis.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    fail_at = RANK[Severity(options.fail_on)]
    return FINDINGS if any(RANK[f.severity] >= fail_at for f in report.findings) else CLEAN


def run(argv: Sequence[str] | None = None, prog: str = "nginx-fleet-analyze") -> NoReturn:
    """Console-script entry: main(), then exit without tearing the interpreter down.

    A CI job runs this once per check; freeing every object of the parsed config at exit
    would only add to its start-to-end time. Output is flushed first.
    """
    # One short process: the cyclic collector would only walk the parsed tree again and again
    # (~3 ms of a 300-line config's run), and os._exit below frees everything at once.
    gc.disable()
    code = main(argv, prog)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
