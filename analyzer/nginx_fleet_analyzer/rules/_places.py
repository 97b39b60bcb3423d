"""One finding per place: a snippet included N times is one line to fix, not N findings."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator

from nginx_fleet_analyzer.findings import Finding
from nginx_fleet_analyzer.rules import RuleContext

Check = Callable[[RuleContext], Iterable[Finding]]


def once_per_place(check: Check) -> Callable[[RuleContext], Iterator[Finding]]:
    """Wrap a rule's check so that it reports each file and line once (the first one wins).

    Included files are copied into the tree at every include, so a directive of a shared
    snippet (proxy_params, a headers file) is met once per including block.
    """

    @functools.wraps(check)
    def deduplicated(ctx: RuleContext) -> Iterator[Finding]:
        seen: set[tuple[str, int]] = set()
        for finding in check(ctx):
            place = (finding.file, finding.line)
            if place not in seen:
                seen.add(place)
                yield finding

    return deduplicated
