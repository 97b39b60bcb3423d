"""Precision suite: realistic configs through the real `nginx -t`/`-T` and the engine."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.precision.harness import (
    Case,
    all_cases,
    analyse_dump,
    analyse_files,
    compare,
    install,
    nginx,
    relative,
    skip_without_nginx_or_modules,
)
from tests.precision.known_wrong import KNOWN_WRONG

CASES = all_cases()
_SCRIPT = Path(sys.executable).with_name("nginx-fleet-analyze")
# The console script of the installed engine; the module itself when it is not installed.
CLI = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "nginx_fleet_analyzer.cli"]
KINDS = ("nginx", "errors", "findings", "facts", "site")


@dataclass(slots=True)
class Run:
    """One config installed under a prefix, nginx's verdict and the engine's findings."""

    prefix: Path
    test: subprocess.CompletedProcess[str]
    findings: list[dict[str, object]]
    # With the host facts of expected.toml's [with_facts] (None when it has none).
    findings_with_facts: list[dict[str, object]] | None = None


_RUNS: dict[str, Run] = {}


@pytest.fixture
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Install, test and analyse a config once per session."""
    case: Case = request.param
    skip_without_nginx_or_modules(case)
    if case.name not in _RUNS:
        base = tmp_path_factory.getbasetemp()
        prefix = tmp_path_factory.mktemp(case.name, numbered=True)
        prefix.rmdir()
        install(case, prefix, base / "precision-certs")
        test = nginx(prefix, "-t")
        with_facts = None
        if test.returncode == 0:
            dump = nginx(prefix, "-T")
            assert dump.returncode == 0, dump.stderr
            report = analyse_dump(dump.stdout)
            if case.facts is not None:
                with_facts = relative(analyse_dump(dump.stdout, case.facts), prefix)
        else:
            report = analyse_files(prefix / "nginx.conf")
        _RUNS[case.name] = Run(prefix, test, relative(report, prefix), with_facts)
    return _RUNS[case.name]


def _cases(kind: str, *, with_facts: bool = False, clean_only: bool = False) -> list[object]:
    """Parameters of one test kind, strict xfail where KNOWN_WRONG lists the config.

    `clean_only`: only the configs nginx accepts with no real problem (the no-false-error tests).
    """
    params: list[object] = []
    for case in CASES:
        if with_facts and case.facts is None:
            continue
        if clean_only and (not case.accepted or case.real_problem):
            continue
        reason = KNOWN_WRONG.get(f"{kind}/{case.name}")
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


def test_suite_is_large_enough() -> None:
    """The issue asks for at least 15 realistic configs; the brief for 18."""
    assert len(CASES) >= 18


def test_known_wrong_names_real_tests() -> None:
    """Every KNOWN_WRONG key is "<kind>/<config>" of an existing config, so none is dead."""
    names = {case.name for case in CASES}
    with_facts = {case.name for case in CASES if case.facts is not None}
    for key in KNOWN_WRONG:
        kind, _, name = key.partition("/")
        assert kind in KINDS, key
        assert name in (with_facts if kind == "facts" else names), key


@pytest.mark.parametrize("run", _cases("nginx"), indirect=True)
def test_real_nginx_verdict(run: Run, request: pytest.FixtureRequest) -> None:
    """nginx -t accepts each config (and rejects the ones written to be rejected)."""
    case: Case = request.node.callspec.params["run"]
    if case.accepted:
        assert run.test.returncode == 0, run.test.stderr
    else:
        assert run.test.returncode != 0, "nginx accepted a config written to be rejected"


@pytest.mark.parametrize("run", _cases("errors", clean_only=True), indirect=True)
def test_no_false_errors(run: Run) -> None:
    """Zero error findings on accepted configs unless a TLS or leak problem is really there."""
    errors = [
        f"{f['rule']} {f['file']}:{f['line']}" for f in run.findings if f["severity"] == "error"
    ]
    assert errors == []


@pytest.mark.parametrize("run", _cases("findings"), indirect=True)
def test_expected_findings(run: Run, request: pytest.FixtureRequest) -> None:
    """Errors and warnings are exactly the ones an expert expects."""
    case: Case = request.node.callspec.params["run"]
    problems = compare(case, run.findings)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("run", _cases("facts", with_facts=True), indirect=True)
def test_expected_findings_with_host_facts(run: Run, request: pytest.FixtureRequest) -> None:
    """Given the CPU count, fd limit and memory, facts-dependent rules speak up (or stay quiet)."""
    case: Case = request.node.callspec.params["run"]
    assert run.findings_with_facts is not None
    problems = compare(case.with_facts(), run.findings_with_facts)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("case", _cases("site", clean_only=True))
def test_site_file_alone_has_no_false_errors(case: Case, tmp_path: Path) -> None:
    """A site file read alone is parsed in the context nginx includes it in: no error findings."""
    install(case, tmp_path / "etc", tmp_path / "certs")
    report = analyse_files(tmp_path / "etc" / case.site_file)
    errors = [f"{f.rule} {f.line}: {f.message}" for f in report.findings if f.severity == "error"]
    assert errors == []
    assert report.failures == []


def _cli(target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, str(target), "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def cli_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], subprocess.CompletedProcess[str]]:
    """The console script on every config's main file and site file, a few processes at a time."""
    root = tmp_path_factory.mktemp("cli")
    targets: dict[tuple[str, str], Path] = {}
    for case in CASES:
        prefix = root / case.name
        install(case, prefix, root / "certs")
        targets[(case.name, "main")] = prefix / "nginx.conf"
        targets[(case.name, "site")] = prefix / case.site_file
    # Each run is mostly interpreter start-up; overlapping them keeps the suite quick.
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(targets, pool.map(_cli, targets.values()), strict=True))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
@pytest.mark.parametrize("which", ["main", "site"])
def test_cli_on_single_files(
    case: Case, which: str, cli_runs: dict[tuple[str, str], subprocess.CompletedProcess[str]]
) -> None:
    """The console script on the main file (with its includes) or a site file alone gives JSON."""
    done = cli_runs[(case.name, which)]
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["failures"] == []
    assert isinstance(report["findings"], list)
    assert 0 <= report["score"] <= 100
