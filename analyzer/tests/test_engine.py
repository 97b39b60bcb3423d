"""The engine: all rules run, findings sorted, a crashing rule becomes a failure not a crash."""

from __future__ import annotations

from collections.abc import Iterable

from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.loader import parse_dump, parse_text
from nginx_fleet_analyzer.rules import Rule, RuleContext, all_rules


def test_validity_rules_are_registered() -> None:
    ids = {r.id for r in all_rules()}
    assert {"V-context", "V-args", "V-unknown", "V-dup", "V-deprecated"} <= ids


def test_findings_are_sorted_and_scored() -> None:
    config = parse_text("http {\n  sendfile maybe;\n}\nevents {\n worker_processes 2;\n}\n")
    report = analyze(config)
    positions = [(f.file, f.line) for f in report.findings]
    assert positions == sorted(positions)
    assert report.has_errors and report.score.categories["validity"] < 100
    assert report.failures == []


def test_a_crashing_rule_is_reported_and_others_still_run() -> None:
    def broken(_ctx: RuleContext) -> Iterable[Finding]:
        raise ZeroDivisionError("boom")

    crash = Rule("T-broken", Category.TRANSFER, Severity.INFO, broken)
    [validity] = [r for r in all_rules() if r.id == "V-unknown"]
    report = analyze(parse_text("http { sendfiel on; }\n"), rules=[crash, validity])
    assert [f.rule for f in report.findings] == ["V-unknown"]
    assert report.failures[0].rule == "T-broken" and "boom" in report.failures[0].error


def test_garbage_input_gives_findings_not_exceptions() -> None:
    report = analyze(parse_text('\x00{{{ "unterminated\n}}}}'))
    assert report.has_errors and all(
        f.rule.startswith("V-") for f in report.findings if f.severity == "error"
    )


def test_rule_modules_list_every_module_of_the_rules_package() -> None:
    """The named rule modules are exactly the package's public modules (none forgotten)."""
    import pkgutil

    from nginx_fleet_analyzer import rules

    found = {m.name for m in pkgutil.iter_modules(rules.__path__) if not m.name.startswith("_")}
    assert set(rules.RULE_MODULES) == found


def test_an_analysed_config_is_not_kept_alive_by_the_engines_caches() -> None:
    """A long-running worker analyses config after config: none may outlive its analysis."""
    import gc
    import weakref

    config = parse_dump(
        "# configuration file /etc/nginx/nginx.conf:\n"
        "events {}\nhttp {\n    server {\n        listen 80;\n        location / { root /srv; }\n"
        "    }\n}\n"
    )
    analyze(config)
    gone = weakref.ref(config)
    del config
    gc.collect()
    assert gone() is None
