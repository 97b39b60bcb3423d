"""Helpers shared by the rule tests: run one rule on inline text, and a robustness check."""

from __future__ import annotations

import re

from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from nginx_fleet_analyzer.findings import Category, Finding
from nginx_fleet_analyzer.loader import parse_text
from nginx_fleet_analyzer.rules import RuleContext, all_rules, get_rule

# Matches the arguments of every directive: rules must cope with directives that lack them.
WITHOUT_ARGUMENTS = re.compile(r"(?<=[a-z_0-9])( [^;{}\n]*)?(?=;|\{)")
EVERYTHING_FACTS = HostFacts(
    nginx_version=(1, 18, 0),
    cpu_count=8,
    mem_total_bytes=1024**2,
    modules=frozenset({"http_gzip_static_module", "http_v2_module"}),
    modules_known=True,
    worker_nofile_limit=10,
    somaxconn=10,
    openssl_version=(1, 0, 2),
)
EVERYTHING_METRICS = MetricsWindow(
    peak_active=900,
    active_p95=700,
    avg_active=400,
    waiting_ratio=0.9,
    accepts_delta=100,
    handled_delta=90,
    req_per_s=5000,
    cpu_pct=90,
    listen_overflows_delta=5,
    cache_hit_ratio=0.1,
    upstream_req_per_s={"app": 900.0},
    status_2xx_get_ratio=0.95,
    nginx_cpu_pct_mean=80,
    nginx_cpu_pct_p95=95,
    nginx_cpu_source="workers",
)


def run(
    rule_id: str,
    text: str,
    facts: HostFacts | None = None,
    metrics: MetricsWindow | None = None,
) -> list[Finding]:
    """Findings of one rule on an inline config."""
    context = RuleContext(config=parse_text(text), facts=facts, metrics=metrics)
    return list(get_rule(rule_id).check(context))


def assert_rules_survive_directives_without_arguments(category: Category, source: str) -> None:
    """Every rule of category copes with source stripped of all arguments, facts or not."""
    text = WITHOUT_ARGUMENTS.sub("", source)
    assert "{" in text
    checked = [r for r in all_rules() if r.category == category]
    assert checked
    for check in checked:
        for facts, metrics in ((None, None), (EVERYTHING_FACTS, EVERYTHING_METRICS)):
            for finding in run(check.id, text, facts, metrics):
                assert finding.rule == check.id
                assert finding.doc_url.startswith("https://nginx.org/en/docs/")
