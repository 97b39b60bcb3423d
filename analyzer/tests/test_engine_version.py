"""The engine's version moves with its rule catalogue: a new rule set re-analyses the fleet."""

from __future__ import annotations

import hashlib

from nginx_fleet_analyzer.engine import ENGINE_VERSION
from nginx_fleet_analyzer.rules import all_rules

# ENGINE_VERSION -> SHA-256 of the rule catalogue it was set for. A rule added, removed or given
# another category or severity fails the test below: bump ENGINE_VERSION and add its line here.
CATALOGUES = {
    1: "00658d035fae12dc11e926e0fc840129785401281e80d1411462e7b5668bc79f",
}


def catalogue_digest() -> str:
    """SHA-256 over every registered rule's id, category and default severity."""
    lines = "\n".join(f"{rule.id} {rule.category} {rule.severity}" for rule in all_rules())
    return hashlib.sha256(lines.encode()).hexdigest()


def test_the_rule_catalogue_is_the_one_of_the_current_engine_version() -> None:
    assert max(CATALOGUES) == ENGINE_VERSION, "the newest catalogue line is the current version's"
    assert catalogue_digest() == CATALOGUES[ENGINE_VERSION], (
        "the rule catalogue changed: bump ENGINE_VERSION in nginx_fleet_analyzer/engine.py and "
        f'add `{ENGINE_VERSION + 1}: "{catalogue_digest()}"` to CATALOGUES'
    )
