"""What an nginx (PCRE) regex can match, read from the parse tree of Python's own regex engine.

The security rules ask small questions of a location, rewrite, `if` or `map` regex: can capture
group N hold a newline, a dot, must it start with '/', which strings does the regex accept.
PCRE and Python share the syntax nginx configs use; a pattern Python cannot parse gets no
answer (None), and the rules stay silent on it rather than guess.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from itertools import product

from nginx_fleet_analyzer.record import Record

# re._parser is the engine's own parser (sre_parse before 3.11 without the deprecation warning).
TYPE_CHECKING = False  # not typing's: see cli.py
if TYPE_CHECKING:
    from typing import Any

    Node = tuple[Any, Any]

_PARSER: Any = importlib.import_module("re._parser")
_NAMED_GROUP = re.compile(r"\(\?(?:<([A-Za-z_]\w*)>|'([A-Za-z_]\w*)')")
_SPACES = " \t\n\r\f\v"
_MAX_SAMPLES = 24


def _op(node: Node) -> str:
    return str(getattr(node[0], "name", node[0]))


def to_python(pattern: str) -> str:
    """A PCRE pattern in Python's spelling: `(?<name>` and `(?'name'` become `(?P<name>`."""
    return _NAMED_GROUP.sub(lambda m: f"(?P<{m[1] or m[2]}>", pattern)


class Regex(Record):
    """A parsed regex: its node list, named groups and whether it ignores case."""

    __slots__ = ("group_count", "ignore_case", "names", "nodes", "source")

    source: str
    nodes: list[Node]
    names: dict[str, int]
    group_count: int
    ignore_case: bool

    def __init__(
        self,
        source: str,
        nodes: list[Node],
        names: dict[str, int],
        group_count: int,
        ignore_case: bool,
    ) -> None:
        self.source = source
        self.nodes = nodes
        self.names = names
        self.group_count = group_count
        self.ignore_case = ignore_case

    def group(self, key: int | str) -> list[Node] | None:
        """The nodes of capture group `key` (number or name), None when there is no such group."""
        index = self.names.get(key) if isinstance(key, str) else key
        if index is None or not 0 < index <= self.group_count:
            return None
        return _find_group(self.nodes, index)

    def search(self, text: str) -> bool:
        """Whether the regex matches somewhere in `text`, as nginx's unanchored match does."""
        flags = re.IGNORECASE if self.ignore_case else 0
        try:
            return re.search(to_python(self.source), text, flags) is not None
        except re.error:
            return False


@lru_cache(maxsize=2048)
def parse_regex(pattern: str, ignore_case: bool = False) -> Regex | None:
    """The parsed regex, or None when Python's engine cannot read it."""
    try:
        parsed = _PARSER.parse(to_python(pattern), re.IGNORECASE if ignore_case else 0)
    except (re.error, RecursionError, OverflowError):
        return None
    state = parsed.state
    return Regex(
        source=pattern,
        nodes=list(parsed),
        names=dict(state.groupdict),
        group_count=int(state.groups) - 1,
        ignore_case=ignore_case or bool(state.flags & re.IGNORECASE),
    )


def _find_group(nodes: list[Node], index: int) -> list[Node] | None:
    for node in nodes:
        if _op(node) == "SUBPATTERN" and node[1][0] == index:
            return list(node[1][3])
        for inner in _children(node):
            found = _find_group(list(inner), index)
            if found is not None:
                return found
    return None


def _children(node: Node) -> list[list[Node]]:
    """The node lists nested in a node (alternatives, group bodies, repeated parts)."""
    op, av = _op(node), node[1]
    if op == "SUBPATTERN":
        return [av[3]]
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return [av[2]]
    if op == "BRANCH":
        return list(av[1])
    if op in ("ATOMIC_GROUP",):
        return [av]
    if op in ("ASSERT", "ASSERT_NOT"):
        return [av[1]]
    if op == "GROUPREF_EXISTS":
        return [branch for branch in av[1:] if branch is not None]
    return []


def _in_class(items: list[Node], char: str, ignore_case: bool) -> bool:
    negate = False
    hit = False
    candidates = {char, char.lower(), char.upper()} if ignore_case else {char}
    for item in items:
        op, av = _op(item), item[1]
        if op == "NEGATE":
            negate = True
        elif op == "LITERAL":
            hit = hit or chr(av) in candidates
        elif op == "RANGE":
            hit = hit or any(av[0] <= ord(c) <= av[1] for c in candidates)
        elif op == "CATEGORY":
            hit = hit or _in_category(str(getattr(av, "name", av)), char)
    return hit != negate


def _in_category(category: str, char: str) -> bool:
    base = category.removeprefix("CATEGORY_")
    negated = base.startswith("NOT_")
    base = base.removeprefix("NOT_")
    if base == "DIGIT":
        inside = char.isascii() and char.isdigit()
    elif base == "SPACE":
        inside = char in _SPACES
    elif base == "WORD":
        inside = char.isalnum() or char == "_"
    elif base == "LINEBREAK":
        inside = char == "\n"
    else:
        inside = True
    return inside != negated


def can_contain(nodes: list[Node], char: str, ignore_case: bool = False) -> bool:
    """Whether text matched by `nodes` can contain `char` ('.' never matches a newline in PCRE)."""
    for node in nodes:
        op, av = _op(node), node[1]
        if op == "LITERAL":
            if chr(av) == char or (ignore_case and chr(av).lower() == char.lower()):
                return True
        elif op == "NOT_LITERAL":
            if chr(av) != char:
                return True
        elif op == "ANY":
            if char != "\n":
                return True
        elif op == "IN":
            if _in_class(av, char, ignore_case):
                return True
        elif op in ("ASSERT", "ASSERT_NOT", "AT"):
            continue
        elif op == "GROUPREF":
            return True
        elif op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[1] == 0:
            continue
        elif any(can_contain(list(inner), char, ignore_case) for inner in _children(node)):
            return True
    return False


def _nullable(node: Node) -> bool:
    op, av = _op(node), node[1]
    if op in ("AT", "ASSERT", "ASSERT_NOT"):
        return True
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return av[0] == 0 or all(_nullable(n) for n in av[2])
    if op == "SUBPATTERN":
        return all(_nullable(n) for n in av[3])
    if op == "ATOMIC_GROUP":
        return all(_nullable(n) for n in av)
    if op == "BRANCH":
        return any(all(_nullable(n) for n in branch) for branch in av[1])
    return False


def must_start_with(nodes: list[Node], char: str) -> bool:
    """Whether every text matched by `nodes` starts with `char` (e.g. a capture after '/')."""
    for node in nodes:
        op, av = _op(node), node[1]
        if op in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        if op == "LITERAL":
            return chr(av) == char
        if op == "SUBPATTERN":
            return must_start_with(list(av[3]), char)
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            return av[0] > 0 and must_start_with(list(av[2]), char)
        if op == "BRANCH":
            return all(must_start_with(list(branch), char) for branch in av[1])
        return False
    return False


def can_start_with(nodes: list[Node], char: str, ignore_case: bool = False) -> bool:
    """Whether some text matched by `nodes` starts with `char`."""
    for node in nodes:
        if can_contain([node], char, ignore_case) and _starts(node, char, ignore_case):
            return True
        if not _nullable(node):
            return False
    return False


def _starts(node: Node, char: str, ignore_case: bool) -> bool:
    op = _op(node)
    if op in ("LITERAL", "NOT_LITERAL", "ANY", "IN", "GROUPREF"):
        return True
    return any(can_start_with(list(inner), char, ignore_case) for inner in _children(node))


def preceding_literal(regex: Regex, index: int) -> str | None:
    """The literal character right before capture group `index` at the top level, if any."""
    previous: Node | None = None
    for node in regex.nodes:
        if _op(node) == "SUBPATTERN" and node[1][0] == index:
            if previous is not None and _op(previous) == "LITERAL":
                return chr(previous[1])
            return None
        previous = node
    return None


def samples(regex: Regex) -> list[str]:
    """A few short strings the regex accepts (checked with the engine), shortest choices first."""
    try:
        produced = _samples(regex.nodes)
    except _NoSample:
        return []
    return [text for text in produced if regex.search(text)]


class _NoSample(Exception):
    """The pattern uses a construct the sample generator does not model."""


_PREFERRED = "aex0-./:_"


def _one_char(node: Node) -> str:
    op, av = _op(node), node[1]
    if op == "LITERAL":
        return chr(av)
    if op == "ANY":
        # A bare '.' in a host pattern is most often a dot the author meant literally.
        return "."
    for char in _PREFERRED:
        if op == "NOT_LITERAL" and chr(av) != char:
            return char
        if op == "IN" and _in_class(av, char, False):
            return char
    raise _NoSample


def _samples(nodes: list[Node]) -> list[str]:
    options: list[list[str]] = []
    for node in nodes:
        op, av = _op(node), node[1]
        if op in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        if op in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            options.append([_one_char(node)])
        elif op == "SUBPATTERN":
            options.append(_samples(list(av[3])))
        elif op == "ATOMIC_GROUP":
            options.append(_samples(list(av)))
        elif op == "BRANCH":
            options.append([text for branch in av[1] for text in _samples(list(branch))])
        elif op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            inner = _samples(list(av[2]))
            if av[0] == 0:
                options.append(["", *inner])
            else:
                options.append([text * min(av[0], 8) for text in inner])
        else:
            raise _NoSample
    results = [""]
    for choice in options:
        results = ["".join(pair) for pair in product(results, choice[:_MAX_SAMPLES])]
        results = results[:_MAX_SAMPLES]
    return results
