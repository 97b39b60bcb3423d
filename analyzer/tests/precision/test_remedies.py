"""Recommended diffs on the precision configs, judged by the real `nginx -t`.

For every finding with a machine-applicable fix of every config nginx accepts: the engine's
checked patch is offered (or refused with a reason from the short list below), and every offered
patch, written over the installed tree, passes `nginx -t`; so does the patch of all of a
config's fixable findings together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from nginx_fleet_analyzer import parse_dump
from nginx_fleet_analyzer.dump import split_dump
from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.facts import HostFacts
from nginx_fleet_analyzer.findings import Finding
from nginx_fleet_analyzer.remedy import APPLICABLE, apply_ops, propose, recommend

from tests.precision.harness import (
    Case,
    all_cases,
    install,
    nginx,
    skip_without_nginx_or_modules,
)
from tests.precision.harness import nginx_version as installed_version

# (config, rule) whose patch the self-check refuses, and why that is right.
REFUSED = {
    # The alias fix would rewrite a block's arguments: a person picks the location's new form.
    ("alias-traversal", "X-alias-traversal"): "is a block",
    # HSTS added to the server is lost in the locations that have add_header lines of their own.
    ("docker-registry", "S-hsts"): "introduces X-add-header-inherit",
    # Headers re-added in one location still leave other child blocks without them.
    ("http-level-headers", "X-add-header-inherit"): "still reported",
    ("spa-static", "X-add-header-inherit"): "still reported",
}

CASES = [pytest.param(case, id=case.name) for case in all_cases() if case.accepted]


def _fixable(findings: list[Finding]) -> list[Finding]:
    return [
        f
        for f in findings
        if f.fix is not None and all(e.action in APPLICABLE for e in f.fix.edits())
    ]


def _nginx_accepts(prefix: Path, files: dict[str, str], patch: list[dict[str, Any]]) -> str:
    """Write the patch over the tree, run `nginx -t`, restore the files; nginx's complaint."""
    try:
        for file_patch in patch:
            path = file_patch["path"]
            Path(path).write_text(apply_ops(files[path], file_patch["ops"]))
        result = nginx(prefix, "-t")
        return "" if result.returncode == 0 else result.stderr
    finally:
        for file_patch in patch:
            Path(file_patch["path"]).write_text(files[file_patch["path"]])


def _install(case: Case, tmp_path: Path) -> tuple[Path, str]:
    """The config installed under a prefix, and its real `nginx -T` dump."""
    skip_without_nginx_or_modules(case)
    prefix = tmp_path / "tree"
    install(case, prefix, tmp_path / "certs")
    dump = nginx(prefix, "-T")
    assert dump.returncode == 0, dump.stderr
    return prefix, dump.stdout


@pytest.mark.parametrize("case", CASES)
def test_offered_patches_pass_the_real_nginx(case: Case, tmp_path: Path) -> None:
    prefix, text = _install(case, tmp_path)
    facts = HostFacts(nginx_version=installed_version())
    fixable = _fixable(analyze(parse_dump(text), facts).findings)
    files = dict(split_dump(text))
    refused: dict[str, str] = {}
    for finding in fixable:
        proposal = propose(text, [finding.key], facts=facts).to_dict()
        if not proposal["ok"]:
            assert proposal["reason"], finding.key
            refused[finding.rule] = str(proposal["reason"])
            continue
        assert finding.key in proposal["resolved"]
        complaint = _nginx_accepts(prefix, files, proposal["files"])
        assert complaint == "", (finding.key, proposal["diff"], complaint)
    expected = {rule: why for (name, rule), why in REFUSED.items() if name == case.name}
    assert sorted(refused) == sorted(expected), refused
    for rule, why in expected.items():
        assert why in refused[rule]
    keys = [f.key for f in fixable]
    if keys and not expected:
        together = propose(text, keys, facts=facts).to_dict()
        assert together["ok"], together["reason"]
        assert _nginx_accepts(prefix, files, together["files"]) == ""


@pytest.mark.parametrize("case", CASES)
def test_the_batched_listing_offers_only_what_a_single_check_offers(
    case: Case, tmp_path: Path
) -> None:
    """`recommend` never offers a diff that `propose`, checking it alone, would refuse."""
    _, dump = _install(case, tmp_path)
    facts = HostFacts(nginx_version=installed_version())
    for listed in recommend(dump, facts=facts):
        fields = listed.to_dict()
        alone = propose(dump, list(fields["keys"]), facts=facts).to_dict()  # type: ignore[call-overload]
        if listed.ok:
            assert alone["ok"], (fields["keys"], alone["reason"])
            assert alone["diff"] == fields["diff"] and alone["files"] == fields["files"]
