"""The comparison of the precision suite: what counts as agreement."""

from __future__ import annotations

from pathlib import Path

from tests.precision.harness import Case, Expectation, compare, missing_modules


def _finding(rule: str, severity: str, file: str = "a.conf", line: int = 1) -> dict[str, object]:
    return {"rule": rule, "severity": severity, "file": file, "line": line, "message": "m"}


def _case(*expected: Expectation) -> Case:
    return Case("c", Path("."), True, False, "a.conf", list(expected))


def test_exact_match_agrees_and_infos_are_ignored() -> None:
    case = _case(Expectation("S-ciphers", "error", "why", file="a.conf", line=3))
    found = [_finding("S-ciphers", "error", line=3), _finding("X-tokens", "info")]
    assert compare(case, found) == []


def test_unexpected_warning_and_missing_error_are_reported() -> None:
    case = _case(Expectation("S-ciphers", "error", "why"))
    problems = compare(case, [_finding("G-off", "warning")])
    assert len(problems) == 2
    assert problems[0].startswith("expected S-ciphers/error")
    assert problems[1].startswith("unexpected G-off/warning")


def test_one_finding_per_cause_counts() -> None:
    case = _case(Expectation("S-session-cache", "warning", "why"))
    twice = [_finding("S-session-cache", "warning", line=n) for n in (1, 9)]
    assert compare(case, twice) != []


def test_a_different_line_or_severity_does_not_match() -> None:
    case = _case(Expectation("X-alias-traversal", "error", "why", file="a.conf", line=11))
    assert compare(case, [_finding("X-alias-traversal", "error", line=12)]) != []
    assert compare(case, [_finding("X-alias-traversal", "warning", line=11)]) != []


def test_an_allowed_judgment_call_may_be_absent_or_present_once() -> None:
    case = _case(Expectation("G-off", "warning", "why", optional=True))
    assert compare(case, []) == []
    assert compare(case, [_finding("G-off", "warning")]) == []
    assert compare(case, [_finding("G-off", "warning"), _finding("G-off", "warning", line=2)])


def test_an_expected_info_is_required() -> None:
    case = _case(Expectation("S-protocols", "info", "why"))
    assert compare(case, []) != []
    assert compare(case, [_finding("S-protocols", "info")]) == []


def test_missing_module_names_the_debian_package(tmp_path: Path) -> None:
    (tmp_path / "m.conf").write_text("load_module /nonexistent/ngx_stream_module.so;\n")
    assert missing_modules(tmp_path) == ["libnginx-mod-stream"]
    (tmp_path / "m.conf").write_text("# load_module is named in a comment only\n")
    assert missing_modules(tmp_path) == []
