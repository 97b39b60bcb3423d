"""Where the value of an nginx variable comes from, as far as the injection rules need to know.

A directive's argument is a script of literals and variables. Each variable is expanded to what
can reach it: a built-in (client-controlled or not), a capture of the regex that matched last,
the values a `set` gives it, or a `map`'s values. The rules ask of the result whether the client
can put a newline, a carriage return or a dot into it, and whether it always starts with '/'.
"""

from __future__ import annotations

import re

from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import Record
from nginx_fleet_analyzer.rules._regex import (
    Regex,
    can_contain,
    must_start_with,
    parse_regex,
)

# nginx's script compiler: $1..$9, $name and ${name}.
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([1-9])|([A-Za-z_][A-Za-z0-9_]*))")
_MAX_DEPTH = 6
_MAX_ALTERNATIVES = 16


class Source(Record):
    """What one variable can hold: client control, CR/LF, dots, a leading slash."""

    __slots__ = (
        "carriage",
        "defined_at",
        "dot",
        "name",
        "newline",
        "origins",
        "slash_first",
        "user",
    )

    name: str
    user: bool
    newline: bool
    carriage: bool
    dot: bool
    slash_first: bool
    # Where the value is decided (a regex location, rewrite or if), for the evidence.
    defined_at: Directive | None
    # Every place that can decide it when several do (set in several locations), in order.
    origins: tuple[Directive, ...]

    def __init__(
        self,
        name: str,
        user: bool = False,
        newline: bool = False,
        carriage: bool = False,
        dot: bool = False,
        slash_first: bool = False,
        defined_at: Directive | None = None,
        origins: tuple[Directive, ...] = (),
    ) -> None:
        self.name = name
        self.user = user
        self.newline = newline
        self.carriage = carriage
        self.dot = dot
        self.slash_first = slash_first
        self.defined_at = defined_at
        self.origins = origins


SAFE = Source("")

# Request data nginx hands over decoded ($uri) or raw; every other built-in is nginx's own.
_BUILTINS: dict[str, Source] = {
    "uri": Source("$uri", user=True, newline=True, carriage=True, dot=True, slash_first=True),
    "document_uri": Source(
        "$document_uri", user=True, newline=True, carriage=True, dot=True, slash_first=True
    ),
    "request_uri": Source("$request_uri", user=True, dot=True, slash_first=True),
    "args": Source("$args", user=True, dot=True),
    "query_string": Source("$query_string", user=True, dot=True),
    "request": Source("$request", user=True, dot=True),
    "request_body": Source("$request_body", user=True, newline=True, carriage=True, dot=True),
    # The TLS server name the client sent (SNI), in http and in stream's ssl_preread.
    "ssl_server_name": Source("$ssl_server_name", user=True, dot=True),
    "ssl_preread_server_name": Source("$ssl_preread_server_name", user=True, dot=True),
}
# Prefixed families: query arguments, request headers and cookies (raw, no CR/LF).
_USER_PREFIXES = ("arg_", "http_", "cookie_")


def builtin(name: str) -> Source:
    """What a built-in variable can hold (SAFE for variables the client does not set)."""
    name = name.lower()
    if name in _BUILTINS:
        return _BUILTINS[name]
    if name.startswith(_USER_PREFIXES):
        return Source(f"${name}", user=True, dot=True)
    return SAFE


Part = str | Source


def split_script(value: str) -> list[tuple[str, str | None]]:
    """A script as (literal, None) and ('', variable name) pieces, in order."""
    pieces: list[tuple[str, str | None]] = []
    position = 0
    for match in _VARIABLE.finditer(value):
        if match.start() > position:
            pieces.append((value[position : match.start()], None))
        pieces.append(("", match[1] or match[2] or match[3]))
        position = match.end()
    if position < len(value):
        pieces.append((value[position:], None))
    return pieces


def _regex_of_if(node: Directive) -> tuple[str, Regex] | None:
    """The tested variable and regex of `if ($var ~ re)`, else None."""
    condition = if_condition(node)
    if len(condition) != 3 or condition[1] not in ("~", "~*", "!~", "!~*"):
        return None
    regex = parse_regex(condition[2], condition[1].endswith("*"))
    return (condition[0], regex) if regex is not None else None


def if_condition(node: Directive) -> list[str]:
    """The words of an `if` condition without its parentheses: ['$var', '~', 're'] or fewer."""
    words = list(node.args)
    if words and words[0].startswith("("):
        words[0] = words[0][1:]
    if words and words[-1].endswith(")"):
        words[-1] = words[-1][:-1]
    return [w for w in words if w != ""]


def location_regex(location: Directive) -> Regex | None:
    """The regex of a `location ~ re` / `location ~* re`, else None."""
    if len(location.args) == 2 and location.args[0] in ("~", "~*"):
        return parse_regex(location.args[1], location.args[0] == "~*")
    return None


def _rewrite_regex(node: Directive) -> Regex | None:
    if node.name == "rewrite" and node.args:
        regex = parse_regex(node.args[0])
        if regex is not None and regex.group_count:
            return regex
    return None


class Variables:
    """Expands the variables of directive arguments over one parsed configuration."""

    def __init__(self, config: ParsedConfig) -> None:
        self.config = config
        self._sets: dict[str, list[Directive]] = {}
        self._maps: dict[str, list[Directive]] = {}
        self._named: dict[str, list[tuple[Regex, Directive, bool]]] = {}
        for node in config.walk():
            if node.name == "set" and len(node.args) >= 2 and node.args[0].startswith("$"):
                self._sets.setdefault(node.args[0][1:], []).append(node)
            elif node.name == "map" and len(node.args) >= 2 and node.block is not None:
                self._maps.setdefault(node.args[1].lstrip("$"), []).append(node)
            self._note_named(node)

    def _note_named(self, node: Directive) -> None:
        regex: Regex | None = None
        user = True
        bounded = False
        if node.name == "location":
            regex = location_regex(node)
        elif node.name == "rewrite":
            regex = _rewrite_regex(node)
            bounded = True
        elif node.name == "if":
            tested = _regex_of_if(node)
            if tested is not None:
                user = _user_variable(tested[0])
                regex = tested[1]
        if regex is None or not user:
            return
        for name in regex.names:
            self._named.setdefault(name, []).append((regex, node, bounded))

    def _is_user_script(self, value: str) -> bool:
        return any(
            isinstance(p, Source) and p.user for alt in self.expand(value, None) for p in alt
        )

    def expand(self, value: str, at: Directive | None, depth: int = 0) -> list[list[Part]]:
        """The alternatives a script can become: literals and leaf Sources, `set`s inlined."""
        alternatives: list[list[Part]] = [[]]
        for literal, name in split_script(value):
            choices: list[list[Part]] = (
                [[literal]] if name is None else self._variable(name, at, depth)
            )
            alternatives = [a + c for a in alternatives for c in choices][:_MAX_ALTERNATIVES]
        return alternatives

    def _variable(self, name: str, at: Directive | None, depth: int) -> list[list[Part]]:
        if name.isdigit():
            return [[self.capture(int(name), at)]]
        if name in self._sets and depth < _MAX_DEPTH:
            found: list[list[Part]] = []
            for node in self._reaching(name, at):
                found.extend(self.expand(node.args[1], node, depth + 1))
            if found:
                return found[:_MAX_ALTERNATIVES]
        if name in self._maps:
            return [[self._map_source(name, depth)]]
        if name in self._named:
            return [[self._named_source(name)]]
        return [[builtin(name)]]

    def _reaching(self, name: str, at: Directive | None) -> list[Directive]:
        """The `set`s of a variable that can run for a request reaching `at`.

        Those of its own server (any location: a rewrite can carry the request on) and those
        outside every server; another server's never run for this request.
        """
        server = _server_of(at) if at is not None else None
        return [
            node
            for node in self._sets[name]
            if server is None or _server_of(node) in (None, server)
        ]

    def _map_source(self, name: str, depth: int) -> Source:
        """A map's result: client-controlled only when some value carries client data."""
        leaves: list[Source] = []
        for block in self._maps[name]:
            for entry in block.block or []:
                if not entry.args or entry.name in ("hostnames", "volatile", "include"):
                    continue
                key_regex: Regex | None = None
                if entry.name.startswith("~"):
                    key_regex = parse_regex(entry.name.lstrip("~*"), entry.name.startswith("~*"))
                for _, var in split_script(entry.args[-1]):
                    if var is None:
                        continue
                    if var.isdigit():
                        source = block.args[0]
                        if key_regex is not None and self._is_user_script(source):
                            leaves.append(_group_source(key_regex, int(var), entry, False))
                    elif depth < _MAX_DEPTH:
                        for alt in self._variable(var, entry, depth + 1):
                            leaves.extend(p for p in alt if isinstance(p, Source))
        return _union(f"${name}", leaves)

    def _named_source(self, name: str) -> Source:
        leaves = [
            _group_source(regex, name, node, bounded) for regex, node, bounded in self._named[name]
        ]
        return _union(f"${name}", leaves)

    def capture(self, index: int, at: Directive | None) -> Source:
        """What $N holds at `at`: a group of the last regex nginx matched before it."""
        found = capture_regex(at) if at is not None else None
        if found is None:
            return SAFE
        regex, node, bounded, user = found
        if not user:
            return SAFE
        return _group_source(regex, index, node, bounded)


def capture_regex(at: Directive) -> tuple[Regex, Directive, bool, bool] | None:
    """The regex whose captures $1..$9 refer to at `at`: (regex, where, rewrite-bounded, user).

    A rewrite's replacement uses its own captures; otherwise the nearest earlier rewrite of the
    same block, the enclosing `if` regex, then the enclosing regex location.
    """
    own = _rewrite_regex(at)
    if own is not None:
        return own, at, True, True
    node = at
    block = at.parent
    while block is not None:
        siblings = block.block or []
        for sibling in reversed(siblings[: _index(siblings, node)]):
            regex = _rewrite_regex(sibling)
            if regex is not None:
                return regex, sibling, True, True
        if block.name == "if":
            tested = _regex_of_if(block)
            if tested is not None:
                return tested[1], block, False, _user_variable(tested[0])
        if block.name == "location":
            regex = location_regex(block)
            if regex is not None:
                return regex, block, False, True
            # A prefix location matched no regex: earlier captures are not reliable here.
            return None
        node = block
        block = block.parent
    return None


def _server_of(node: Directive) -> Directive | None:
    return next((block for block in node.ancestors() if block.name == "server"), None)


def _user_variable(script: str) -> bool:
    return any(name is not None and builtin(name).user for _, name in split_script(script))


def _index(siblings: list[Directive], node: Directive) -> int:
    for position, sibling in enumerate(siblings):
        if sibling is node:
            return position
    return len(siblings)


def _group_source(regex: Regex, key: int | str, node: Directive, bounded: bool) -> Source:
    """A capture group as a Source.

    A rewrite's captures reach its replacement %-escaped when the request URI was (checked
    against nginx 1.22: %0D%0A stays escaped in the Location), so they carry no CR/LF.
    """
    nodes = regex.group(key)
    name = f"${key}"
    if nodes is None:
        return Source(name)
    return Source(
        name,
        user=True,
        newline=not bounded and can_contain(nodes, "\n", regex.ignore_case),
        carriage=not bounded and can_contain(nodes, "\r", regex.ignore_case),
        dot=can_contain(nodes, ".", regex.ignore_case),
        slash_first=must_start_with(nodes, "/"),
        defined_at=node,
    )


def _union(name: str, leaves: list[Source]) -> Source:
    if not leaves:
        return Source(name)
    return Source(
        name,
        user=any(s.user for s in leaves),
        newline=any(s.newline for s in leaves),
        carriage=any(s.carriage for s in leaves),
        dot=any(s.dot for s in leaves),
        slash_first=all(s.slash_first for s in leaves),
        defined_at=next((s.defined_at for s in leaves if s.defined_at is not None), None),
        origins=_origins(leaves),
    )


def _origins(leaves: list[Source]) -> tuple[Directive, ...]:
    """The places deciding a CR/LF-capable value among `leaves` (all places when none can)."""
    risky = [s for s in leaves if s.newline or s.carriage] or leaves
    found: list[Directive] = []
    for leaf in risky:
        for place in leaf.origins or ((leaf.defined_at,) if leaf.defined_at else ()):
            if all(place is not seen for seen in found):
                found.append(place)
    return tuple(found)
