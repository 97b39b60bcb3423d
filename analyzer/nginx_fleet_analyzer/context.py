"""The context a lone config file is included in (a site file in http, a snippet in a server)."""

from __future__ import annotations

from nginx_fleet_analyzer.directives import specs
from nginx_fleet_analyzer.model import Directive

# Outermost first: a file that fits several is read in the outermost (a `types` file fits
# http, server and location; nginx's own mime.types is included in http).
CONTEXTS = ("main", "http", "server", "location", "stream")
_CODES = {"main": "main", "http": "http", "server": "srv", "location": "loc", "stream": "stream"}
# The blocks that enclose a file read in each context, outermost first.
_WRAPPERS = {
    "main": (),
    "http": ("http",),
    "server": ("http", "server"),
    "location": ("http", "server", "location"),
    "stream": ("stream",),
}


def _allowed(name: str, code: str) -> bool:
    return any(row.contexts == "*" or code in row.contexts.split() for row in specs(name))


def detect_context(nodes: list[Directive]) -> str:
    """The context whose rules allow every known top-level directive of a file.

    `server`/`upstream`/`map` put a file in http, `location`/`listen` in a server, `proxy_pass`
    in a location. When none fits them all (a broken file), the one fitting most, outermost on
    ties. Unknown directives say nothing; an empty file is a main file.
    """
    known = [node.name for node in nodes if specs(node.name)]
    best, best_fit = "main", -1
    for context in CONTEXTS:
        fit = sum(1 for name in known if _allowed(name, _CODES[context]))
        if fit == len(known):
            if context == "http" and _stream_servers(nodes):
                return "stream"
            return context
        if fit > best_fit:
            best, best_fit = context, fit
    return best


def _stream_servers(nodes: list[Directive]) -> bool:
    """Whether the top-level server blocks are stream servers (`proxy_pass` in the server...).

    `server`, `upstream` and `map` fit both http and stream; what the servers hold decides.
    """
    http_only = stream_only = 0
    for server in nodes:
        if server.name != "server" or not server.block:
            continue
        for node in server.block:
            in_http, in_stream = _allowed(node.name, "srv"), _allowed(node.name, "ssrv")
            http_only += in_http and not in_stream
            stream_only += in_stream and not in_http
    return stream_only > http_only


def wrap(context: str, path: str, length: int) -> tuple[list[Directive], Directive | None]:
    """Stand-in blocks around a file read in `context`: (the new root, the innermost block).

    They sit at line 0 of the file (no real line is 0), so findings anchored on them are known
    to be about the unseen including file. The innermost block's body is left for the caller.
    """
    root: list[Directive] = []
    parent: Directive | None = None
    for name in _WRAPPERS[context]:
        args = ["/"] if name == "location" else []
        block = Directive(name, args, list(args), path, 0, 0, 0, length, [], parent)
        if parent is None:
            root.append(block)
        elif parent.block is not None:
            parent.block.append(block)
        parent = block
    return root, parent
