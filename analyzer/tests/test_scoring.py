"""Scores: severity weights, diminishing repeats, per category, muted findings left out."""

from __future__ import annotations

from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.scoring import score


def finding(rule: str, severity: Severity, category: Category, line: int = 1) -> Finding:
    return Finding(rule, severity, category, "nginx.conf", line, "m", directive=f"d{line}")


def test_clean_config_scores_100_everywhere() -> None:
    result = score([])
    assert result.overall == 100 and set(result.categories.values()) == {100}
    assert set(result.categories) == {str(c) for c in Category}


def test_errors_cost_more_than_warnings_more_than_infos() -> None:
    error = score([finding("V-args", Severity.ERROR, Category.VALIDITY)]).overall
    warning = score([finding("W-processes", Severity.WARNING, Category.WORKERS)]).overall
    info = score([finding("X-tokens", Severity.INFO, Category.SECURITY)]).overall
    assert error < warning < info < 100


def test_repeats_of_one_rule_have_diminishing_cost_and_a_floor() -> None:
    one = score([finding("X-tokens", Severity.INFO, Category.SECURITY)]).overall
    many = score([finding("X-tokens", Severity.INFO, Category.SECURITY, n) for n in range(200)])
    assert many.overall < one and many.overall >= 100 - 2 * 3
    assert many.categories["security"] == many.overall and many.categories["tls"] == 100


def test_muted_findings_do_not_count() -> None:
    items = [
        finding("V-args", Severity.ERROR, Category.VALIDITY, 3),
        finding("X-tokens", Severity.INFO, Category.SECURITY, 4),
    ]
    assert score(items, muted={"V-args@nginx.conf:d3"}).categories["validity"] == 100
    assert score(items, muted={"X-tokens"}).categories["security"] == 100
    assert score(items, muted=lambda f: f.severity == "error").overall == score(items[1:]).overall
