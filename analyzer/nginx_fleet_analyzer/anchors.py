"""Line-free names of places in a config: a directive's block path, stable under edits elsewhere.

A path is the chain of enclosing blocks, each written `name[label]`, joined by '/', e.g.
`http/server[example.com]/location[~ \\.php$]`. The label is what tells a block from its
siblings: `server` by its first server_name (or its first listen when it has none, and with its
listen added when sibling servers share the name), `if` by its condition, every other block by
its arguments (`location` modifier and uri, `upstream`/`map` name). Siblings still alike get
`#2`, `#3`, ... in document order. A directive that may repeat in one block with a distinct
first argument (add_header, proxy_set_header, upstream servers, ...) is named with that argument,
so a finding about one header is not confused with one about the next header.
"""

from __future__ import annotations

from collections import Counter
from contextvars import ContextVar

from nginx_fleet_analyzer.model import Directive

# Labels longer than this are cut (with a digest of the whole label, so they stay distinct):
# keys are stored in columns of bounded size.
LABEL_LIMIT = 64

# Directives repeated in one block, each one told apart by its first argument.
KEYED_BY_FIRST_ARG = frozenset(
    {
        "access_log",
        "add_header",
        "add_trailer",
        "allow",
        "deny",
        "env",
        "error_log",
        "fastcgi_hide_header",
        "fastcgi_param",
        "fastcgi_pass_header",
        "grpc_hide_header",
        "grpc_set_header",
        "include",
        "limit_conn",
        "limit_req",
        "listen",
        "load_module",
        "log_format",
        "proxy_cache_path",
        "proxy_hide_header",
        "proxy_pass_header",
        "proxy_set_header",
        "scgi_hide_header",
        "scgi_param",
        "set",
        "ssl_certificate",
        "ssl_certificate_key",
        "sub_filter",
        "uwsgi_hide_header",
        "uwsgi_param",
    }
)


def _bounded(label: str) -> str:
    if len(label) <= LABEL_LIMIT:
        return label
    import hashlib  # only for over-long labels: its OpenSSL load costs every run ~5 ms

    digest = hashlib.sha1(label.encode(), usedforsecurity=False).hexdigest()[:8]
    return f"{label[: LABEL_LIMIT - 10]}…{digest}"


def _first_listen(server: Directive) -> str:
    listen = server.children("listen")
    return listen[0].args[0] if listen and listen[0].args else ""


def _server_name(server: Directive) -> str:
    names = server.child("server_name")
    return next((name for name in names.args if name), "") if names is not None else ""


def _server_labels(servers: list[Directive]) -> list[str]:
    """Labels of sibling servers: the name, the listen when the name is missing or shared."""
    names = [_server_name(server) for server in servers]
    uses = Counter(names)
    labels = []
    for server, name in zip(servers, names, strict=True):
        listen = _first_listen(server)
        if not name:
            labels.append(f"listen {listen}" if listen else "")
        elif uses[name] > 1 and listen:
            labels.append(f"{name} listen {listen}")
        else:
            labels.append(name)
    return labels


def _block_label(node: Directive) -> str:
    text = " ".join(node.args)
    if node.name == "if" and text.startswith("(") and text.endswith(")"):
        return text[1:-1].strip()
    return text


def _labels(siblings: list[Directive]) -> list[str]:
    if siblings[0].name == "server":
        return _server_labels(siblings)
    return [_block_label(node) for node in siblings]


# Segments of the blocks met so far, by id: a thousand findings under a thousand sibling
# servers would otherwise label every sibling for every finding. Only set inside `memo()`,
# while the tree is alive, so an id cannot be reused by another node.
_MEMO: ContextVar[dict[int, str] | None] = ContextVar("anchor_segments", default=None)


class memo:
    """Remember block segments until the end of the `with` (one analysis of one tree).

    A class, not a contextlib generator: importing contextlib costs every CLI run ~1 ms.
    """

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _MEMO.set({})

    def __exit__(self, *exc_info: object) -> None:
        _MEMO.reset(self._token)


def _sibling_segments(node: Directive) -> dict[int, str]:
    """Segments of the node and its sibling blocks of the same name, by id."""
    if node.parent is None:
        siblings = [node]
    else:
        siblings = [s for s in node.parent.children(node.name) if s.block is not None]
    labels = [_bounded(label) for label in _labels(siblings)]
    segments: dict[int, str] = {}
    seen: dict[str, int] = {}
    for sibling, label in zip(siblings, labels, strict=True):
        seen[label] = ordinal = seen.get(label, 0) + 1
        text = f"{sibling.name}[{label}]" if label else sibling.name
        segments[id(sibling)] = f"{text}#{ordinal}" if ordinal > 1 else text
    return segments


def segment(node: Directive) -> str:
    """One step of a path naming `node`: name, distinguishing label, ordinal among look-alikes."""
    if node.block is None:
        keyed = node.name in KEYED_BY_FIRST_ARG and node.args
        return f"{node.name}[{_bounded(node.args[0])}]" if keyed else node.name
    known = _MEMO.get()
    if known is not None and id(node) in known:
        return known[id(node)]
    segments = _sibling_segments(node)
    if known is not None:
        known.update(segments)
    return segments.get(id(node), node.name)


def block_path(node: Directive) -> str:
    """The path of the blocks enclosing `node`, outermost first ('' at the top level)."""
    return "/".join(segment(block) for block in reversed(list(node.ancestors())))
