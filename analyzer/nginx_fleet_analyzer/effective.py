"""Effective configuration of http servers and locations: values after nginx's inheritance.

nginx merges each setting from http into server into location (nested locations and `if`
blocks included): a block's own directive wins, else the nearest enclosing one, else the
module's default. List directives (add_header, proxy_set_header, allow/deny, access_log …)
are inherited all or nothing. Content handlers (proxy_pass, return …) are not inherited by
nested locations. Rules judge these effective values, not lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from functools import lru_cache

from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import Record

# nginx's defaults of the settings rules judge (from the module documentation).
DEFAULTS: dict[str, tuple[str, ...]] = {
    "sendfile": ("off",),
    "tcp_nopush": ("off",),
    "tcp_nodelay": ("on",),
    "open_file_cache": ("off",),
    "gzip": ("off",),
    "gzip_types": ("text/html",),
    "gzip_vary": ("off",),
    "gzip_proxied": ("off",),
    "gzip_min_length": ("20",),
    "gzip_static": ("off",),
    "expires": ("off",),
    "proxy_http_version": ("1.0",),
    "proxy_cache": ("off",),
    "fastcgi_cache": ("off",),
    "proxy_cache_lock": ("off",),
    "ssl_session_cache": ("none",),
    "ssl_session_timeout": ("5m",),
    "ssl_session_tickets": ("on",),
    "ssl_stapling": ("off",),
    "http2": ("off",),
    "keepalive_timeout": ("75s",),
    "satisfy": ("all",),
}

# List settings nginx keeps in one array per block and inherits all or nothing: a block with any
# entry of its list uses only its own (allow and deny share one array).
_ACCESS_LIST = ("allow", "deny")
LISTS: dict[str, tuple[str, ...]] = {
    "allow": _ACCESS_LIST,
    "deny": _ACCESS_LIST,
    **{
        name: (name,)
        for name in (
            "access_log",
            "add_header",
            "add_trailer",
            "fastcgi_param",
            "grpc_set_header",
            "proxy_set_header",
            "scgi_param",
            "uwsgi_param",
        )
    },
}


def has_own_list(block: Directive, name: str) -> bool:
    """Whether `block` holds its own entries of the list `name` belongs to, so that no enclosing
    block's entries (nor an include of an enclosing block) are in force in it."""
    return any(block.children(member) for member in LISTS.get(name, ()))


PASS_DIRECTIVES = (
    "proxy_pass",
    "fastcgi_pass",
    "uwsgi_pass",
    "scgi_pass",
    "grpc_pass",
    "memcached_pass",
)
# Content handlers that answer from nginx itself (core, njs, lua, perl modules).
ANSWER_DIRECTIVES = (
    "stub_status",
    "empty_gif",
    "js_content",
    "content_by_lua",
    "content_by_lua_block",
    "content_by_lua_file",
    "perl",
    "echo",
)
REDIRECT_FLAGS = ("redirect", "permanent")
# Regexes that match every URI: a rewrite with one of them leaves nothing to serve here.
CATCH_ALL = frozenset(
    {"^", "^/", ".*", "^.*", "^.*$", "(.*)", "^(.*)", "^(.*)$", "^/(.*)", "^/(.*)$"}
)
ABSOLUTE_PREFIXES = ("http://", "https://", "$scheme://")


class Role(StrEnum):
    """What a location (or server, or `if` block) does with the requests it gets."""

    FILES = "serves files"
    PASSES = "passes to an upstream"
    ANSWERS = "answers itself"
    REFUSES = "only denies"
    REROUTES = "only rewrites or redirects"


class Effective(Record):
    """The value of one directive in force at a block, and where it comes from."""

    __slots__ = ("args", "name", "node")

    name: str
    node: Directive | None
    args: tuple[str, ...]

    def __init__(self, name: str, node: Directive | None, args: tuple[str, ...]) -> None:
        self.name = name
        self.node = node
        self.args = args

    @property
    def default_used(self) -> bool:
        """Whether no block on the way up sets it (nginx's default applies)."""
        return self.node is None

    @property
    def holder(self) -> Directive | None:
        """The block whose directive is in force (None when defaulted)."""
        return self.node.parent if self.node is not None else None

    @property
    def first(self) -> str:
        """The first argument in lower case ('' when none)."""
        return self.args[0].lower() if self.args else ""

    @property
    def on(self) -> bool:
        """Whether a flag setting is on (anything but off/none)."""
        return bool(self.args) and self.first not in ("off", "none")


def chain(at: Directive) -> list[Directive]:
    """The blocks whose settings apply at `at`, innermost first (at itself when a block)."""
    blocks = [at] if at.block is not None else []
    blocks.extend(at.ancestors())
    return blocks


# Parsed trees never change after parsing, so answers are cached per (directive object, name);
# the bounds keep a long-running backend from holding on to old trees.
@lru_cache(maxsize=65536)
def value(name: str, at: Directive) -> Effective:
    """The directive `name` in force at block `at` after inheritance, or nginx's default."""
    for block in chain(at):
        found = block.children(name)
        if found:
            return Effective(name, found[-1], tuple(found[-1].args))
        if block.name == "http":
            break
    return Effective(name, None, DEFAULTS.get(name, ()))


@lru_cache(maxsize=65536)
def entries(
    names: str | tuple[str, ...], at: Directive
) -> tuple[Directive | None, list[Directive]]:
    """A list setting in force at `at`: (the block holding it or None, its entries in order).

    Several names form one list when nginx keeps them in one array (allow and deny).
    Callers must not change the returned list (it is cached).
    """
    wanted = (names,) if isinstance(names, str) else names
    for block in chain(at):
        if any(block.children(name) for name in wanted):
            found = [d for d in block.block or () if d.name in wanted]
            if found:
                return block, found
        if block.name == "http":
            break
    return None, []


def headers(at: Directive) -> dict[str, Directive]:
    """add_header entries in force at `at` by lower-case name; an empty value sends nothing."""
    _, found = entries("add_header", at)
    sent: dict[str, Directive] = {}
    for node in found:
        if len(node.args) >= 2 and node.args[1] != "":
            sent[node.args[0].lower()] = node
        elif node.args:
            sent.pop(node.args[0].lower(), None)
    return sent


def _unconditional(block: Directive, names: Iterable[str]) -> list[Directive]:
    return [d for name in names for d in block.children(name)]


def _refuses_by_access(block: Directive) -> bool:
    _, rules = entries(("allow", "deny"), block)
    if not rules or rules[0].name != "deny" or rules[0].args[:1] != ["all"]:
        return False
    # With `satisfy any`, authenticated clients still get in past `deny all`.
    return value("satisfy", block).first != "any"


def _return_role(node: Directive) -> Role:
    code = node.args[0] if node.args else ""
    return Role.REFUSES if code.isdigit() and int(code) >= 400 else Role.ANSWERS


def _reroutes(block: Directive) -> bool:
    rewrites = block.children("rewrite")
    if not rewrites:
        return False
    for node in rewrites:
        args = node.args
        flag = args[2] if len(args) > 2 else ""
        # Without a flag (or with `last`) the new URI is matched against the locations again.
        away = flag in (*REDIRECT_FLAGS, "last", "") or (
            len(args) > 1 and args[1].startswith(ABSOLUTE_PREFIXES)
        )
        if away and args and args[0] in CATCH_ALL:
            return True
    # A location (not `/`) of redirects alone, with nothing to serve from, sends everyone away.
    serving = ("root", "alias", "try_files", "index", "location", "autoindex")
    redirects_only = all(
        (len(n.args) > 2 and n.args[2] in REDIRECT_FLAGS)
        or (len(n.args) > 1 and n.args[1].startswith(ABSOLUTE_PREFIXES))
        for n in rewrites
    )
    return (
        block.name == "location"
        and block.args[-1:] != ["/"]
        and redirects_only
        and not any(block.children(name) for name in serving)
    )


@lru_cache(maxsize=65536)
def role(block: Directive) -> Role:
    """What a location, server or `if` block does with its requests (nginx's content phase)."""
    own_pass = _unconditional(block, PASS_DIRECTIVES)
    if own_pass:
        return Role.PASSES
    if _unconditional(block, ANSWER_DIRECTIVES):
        return Role.ANSWERS
    returns = block.children("return")
    if returns:
        return _return_role(returns[0])
    if block.name == "if" and block.parent is not None:
        # An `if` in a location keeps its location's handler unless it sets its own.
        return role(block.parent)
    if _refuses_by_access(block):
        return Role.REFUSES
    if _reroutes(block):
        return Role.REROUTES
    return Role.FILES


@lru_cache(maxsize=8192)
def locations_of(server: Directive) -> list[Directive]:
    """Every location of a server, nested ones included, in document order."""
    return [d for d in server.walk() if d.name == "location" and d.block is not None]


@lru_cache(maxsize=8192)
def scopes(server: Directive) -> list[Directive]:
    """Where a server's requests end up: its locations, or the server itself when it has none."""
    if server.children("return") or _reroutes(server):
        # A server-level return or redirect answers before any location is chosen.
        return []
    if _refuses_every_handshake(server):
        return []
    found = locations_of(server)
    if (
        found
        and has_docroot(server)
        and not any(_catches_all(loc) for loc in server.children("location"))
    ):
        # A request no location matches is served by the server's own settings: files from
        # the root written for it (with none written, only nginx's stock html/ is there).
        return [*found, server]
    return found if found else [server]


def _refuses_every_handshake(server: Directive) -> bool:
    """A TLS-only server with `ssl_reject_handshake on`: no request ever reaches it."""
    listens = server.children("listen")
    return (
        bool(listens)
        and all("ssl" in d.args or "quic" in d.args for d in listens)
        and value("ssl_reject_handshake", server).first == "on"
    )


def _catches_all(location: Directive) -> bool:
    """Whether every request path matches this location (`location /`, `location ^~ /`)."""
    return location.args in (["/"], ["^~", "/"])


def serving(config: ParsedConfig, *roles: Role) -> list[Directive]:
    """Every scope of every http server whose role is one of `roles`."""
    return list(_serving(config, roles))


@lru_cache(maxsize=64)
def _serving(config: ParsedConfig, roles: tuple[Role, ...]) -> tuple[Directive, ...]:
    return tuple(
        scope for server in config.servers() for scope in scopes(server) if role(scope) in roles
    )


def has_docroot(scope: Directive) -> bool:
    """Whether files are served from a document root written somewhere above (or an alias)."""
    return bool(scope.children("alias")) or value("root", scope).node is not None


_LOOPBACK_HOSTS = ("127.", "[::1]", "localhost", "unix:")


def local_only(server: Directive) -> bool:
    """Whether a server listens on loopback addresses or unix sockets only (no remote client)."""
    listens = server.children("listen")
    # A server without `listen` listens on *:80 (or *:8000 when not root).
    return bool(listens) and all(
        d.args and d.args[0].lower().startswith(_LOOPBACK_HOSTS) for d in listens
    )


def tls_servers(config: ParsedConfig) -> list[Directive]:
    """http servers that speak TLS (`listen … ssl`, `listen … quic`, or the old `ssl on`).

    Not a server with `ssl_reject_handshake on` (a catch-all for unknown SNI names): it ends
    every handshake, so its protocols, ciphers, session cache and headers never reach a client.
    """
    found = []
    for server in config.servers():
        listens = server.children("listen")
        ssl_listen = any("ssl" in d.args or "quic" in d.args for d in listens)
        if not (ssl_listen or value("ssl", server).first == "on"):
            continue
        if value("ssl_reject_handshake", server).first == "on":
            continue
        found.append(server)
    return found


def group(pairs: Iterable[tuple[Directive, Directive]]) -> list[tuple[Directive, list[Directive]]]:
    """(anchor, places) pairs grouped by anchor in first-seen order: one finding per cause."""
    grouped: dict[int, tuple[Directive, list[Directive]]] = {}
    seen: set[tuple[int, int]] = set()
    for anchor, place in pairs:
        entry = grouped.setdefault(id(anchor), (anchor, []))
        if (id(anchor), id(place)) not in seen:
            seen.add((id(anchor), id(place)))
            entry[1].append(place)
    return list(grouped.values())


def nearest_common(places: list[Directive]) -> Directive | None:
    """The innermost block enclosing (or being) every place, or None when they share none."""
    if not places:
        return None
    paths = [list(reversed(chain(p))) for p in places]
    common: Directive | None = None
    for level in zip(*paths, strict=False):
        if any(b is not level[0] for b in level):
            break
        common = level[0]
    return common


def common_block(config: ParsedConfig, places: list[Directive]) -> Directive | None:
    """Where one added line covers every place: the http block, else their nearest common block."""
    http = config.http()
    return http if http is not None else nearest_common(places)


def labels(scopes_: Iterable[Directive]) -> list[str]:
    """People's names of scopes ('server example.com', 'server example.com location /x')."""
    names = []
    for scope in scopes_:
        server = (
            scope
            if scope.name == "server"
            else next((p for p in scope.ancestors() if p.name == "server"), None)
        )
        if server is None or server is scope:
            names.append(scope.label)
        else:
            names.append(f"{server.label} {scope.label}")
    return names


def weak_places(
    config: ParsedConfig,
    name: str,
    places: Iterable[Directive],
    is_weak: Callable[[Effective], bool],
) -> list[tuple[Directive, Effective, list[Directive]]]:
    """(anchor, value, places) where the value of `name` in force at `places` is weak.

    One entry per cause: the directive in force, or, for places running with the default, the
    block where one added line covers them all (http when there is one).
    """
    weak = [(place, found) for place in places if is_weak(found := value(name, place))]
    fallback = common_block(config, [place for place, found in weak if found.default_used])
    values: dict[int, Effective] = {}
    pairs: list[tuple[Directive, Directive]] = []
    for place, found in weak:
        anchor = found.node if found.node is not None else fallback
        if anchor is not None:
            values.setdefault(id(anchor), found)
            pairs.append((anchor, place))
    return [(anchor, values[id(anchor)], found) for anchor, found in group(pairs)]


def describe(places: list[Directive], limit: int = 3) -> str:
    """Places named for a message: the first few and how many more."""
    more = len(places) - limit
    return ", ".join(labels(places[:limit])) + (f" and {more} more" if more > 0 else "")


def subject(places: list[Directive], one: str, many: str) -> str:
    """Places as the subject of a sentence, with the verb agreeing ('server a serves')."""
    return f"{describe(places)} {one if len(places) == 1 else many}"


def forget() -> None:
    """Drop the cached answers of every config analysed so far.

    The caches are keyed by directive objects, which hold their whole tree through their
    parents: left alone they keep old configs alive (up to their bounds) and make every later
    garbage collection walk them. The engine forgets after each analysis.
    """
    for cached in (value, entries, role, locations_of, scopes, _serving):
        cached.cache_clear()
