"""Where a config's http access logs go and in which format: for the rules and for the agent.

nginx facts this follows (ngx_http_log_module.c):
- `access_log` is a list setting: a block with its own entries replaces the inherited list
  whole; a block with none inherits it; with none anywhere nginx writes `combined` to its
  compiled-in path (`--http-log-path`, `logs/access.log` under the prefix by default).
- `log_format NAME [escape=default|json|none] STRING...`: the strings are concatenated as they
  are, with no separator; `combined` is predefined and cannot be redefined.
- A relative path is relative to the prefix (`-p`, else the compiled-in one).
- `access_log off` logs nothing at that level; `syslog:` sends to syslog; a path holding
  variables is opened per request; `gzip` compresses the file as it is written.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from nginx_fleet_analyzer.effective import entries
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import Record

COMBINED = "combined"
# nginx's built-in `combined` format, which has no timing or cache fields.
COMBINED_FORMAT = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent"'
)
DEFAULT_LOG_PATH = "logs/access.log"
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


class LogFormat(Record):
    """A log_format: its name, escaping and text (the strings concatenated as nginx does)."""

    __slots__ = ("escape", "name", "text")

    name: str
    escape: str
    text: str

    def __init__(self, name: str, escape: str, text: str) -> None:
        self.name = name
        self.escape = escape
        self.text = text

    @property
    def variables(self) -> list[str]:
        """The variables the format writes, in order (repeats kept)."""
        return [m.group(1) or m.group(2) for m in _VARIABLE.finditer(self.text)]

    def tokens(self) -> Iterator[tuple[str, str]]:
        """('text', literal) and ('var', name) pieces of the format, in order."""
        position = 0
        for match in _VARIABLE.finditer(self.text):
            if match.start() > position:
                yield "text", self.text[position : match.start()]
            yield "var", match.group(1) or match.group(2)
            position = match.end()
        if position < len(self.text):
            yield "text", self.text[position:]


class LogTarget(Record):
    """One place access log lines go: a file (or why it is not one), its formats, who writes."""

    __slots__ = ("conditional", "formats", "path", "reason", "servers", "state")

    path: str
    # 'file', or 'unsupported' with `reason` (syslog, variables in the path, gzip).
    state: str
    reason: str | None
    formats: list[LogFormat]
    conditional: bool
    servers: list[str]

    def __init__(
        self,
        path: str,
        state: str,
        reason: str | None,
        formats: list[LogFormat],
        conditional: bool,
        servers: list[str],
    ) -> None:
        self.path = path
        self.state = state
        self.reason = reason
        self.formats = formats
        self.conditional = conditional
        self.servers = servers


def log_places(config: ParsedConfig) -> list[Directive]:
    """Every http server, location and `if` block: each may log with its own list."""
    found: list[Directive] = []
    for server in config.servers():
        found.append(server)
        found.extend(d for d in server.walk() if d.name in ("location", "if") and d.block)
    if not found and (http := config.http()) is not None:
        found.append(http)
    return found


def logs_at(place: Directive) -> list[Directive]:
    """The access_log list in force at a place (inherited all or nothing); [] means the default."""
    return entries("access_log", place)[1]


def format_of(access_log: Directive) -> str:
    """The log format an access_log writes ('combined' unless another is named)."""
    args = access_log.args
    named = len(args) > 1 and "=" not in args[1] and args[1] != "gzip"
    return args[1] if named else COMBINED


def formats_at(place: Directive) -> list[str]:
    """Log formats written for requests handled at a place ('combined' by default, none if off)."""
    logs = logs_at(place)
    if not logs:
        return [COMBINED]
    return [format_of(d) for d in logs if d.args and d.args[0] != "off"]


def access_logs(config: ParsedConfig) -> list[Directive]:
    """http `access_log` directives in force somewhere that write somewhere (not `off`)."""
    used = {id(d): d for place in log_places(config) for d in logs_at(place)}
    return [d for d in used.values() if d.args and d.args[0] != "off"]


def formats_in_use(config: ParsedConfig) -> list[str]:
    """Names of the log formats the access logs in force write (nginx logs `combined` unset)."""
    places = log_places(config)
    if not places:
        return [COMBINED]
    return list(dict.fromkeys(name for place in places for name in formats_at(place)))


def log_formats(config: ParsedConfig) -> dict[str, Directive]:
    """The http `log_format` directives by name."""
    return {d.args[0]: d for d in config.find("log_format") if d.args and d.module_scope == "http"}


def log_format(config: ParsedConfig, name: str) -> LogFormat | None:
    """A format by name as nginx compiles it; None when the config does not define it."""
    if name == COMBINED:
        return LogFormat(COMBINED, "default", COMBINED_FORMAT)
    node = log_formats(config).get(name)
    if node is None:
        return None
    rest = node.args[1:]
    escape = "default"
    if rest and rest[0].startswith("escape="):
        escape, rest = rest[0].removeprefix("escape="), rest[1:]
    return LogFormat(name, escape, "".join(rest))


def _server_names(place: Directive) -> list[str]:
    server = (
        place
        if place.name == "server"
        else next((a for a in place.ancestors() if a.name == "server"), None)
    )
    if server is None:
        return []
    return [name for d in server.children("server_name") for name in d.args]


def _resolve(path: str, prefix: str | None) -> str:
    if path.startswith("/") or prefix is None:
        return path
    return posixpath.normpath(posixpath.join(prefix, path))


def discover(
    config: ParsedConfig, *, prefix: str | None = None, default_path: str | None = None
) -> list[LogTarget]:
    """Every access log target in force, with its formats, in first-seen order.

    `prefix` resolves relative paths; `default_path` is nginx's compiled-in log path, written
    where no access_log is in force (`logs/access.log` under the prefix when not given)."""
    if config.http() is None:
        return []
    targets: dict[str, LogTarget] = {}

    def note(path: str, name: str, params: list[str], place: Directive) -> None:
        state, reason = "file", None
        if path.startswith("syslog:"):
            state, reason = "unsupported", "sent to syslog, not to a file"
        elif "$" in path:
            state, reason = "unsupported", "the path holds variables (a file per value)"
        elif any(p == "gzip" or p.startswith("gzip=") for p in params):
            state, reason = "unsupported", "written gzip-compressed"
        else:
            path = _resolve(path, prefix)
        target = targets.get(path)
        if target is None:
            target = targets[path] = LogTarget(path, state, reason, [], False, [])
        found = log_format(config, name)
        if found is not None and found not in target.formats:
            target.formats.append(found)
        target.conditional = target.conditional or any(p.startswith("if=") for p in params)
        for server_name in _server_names(place):
            if server_name not in target.servers:
                target.servers.append(server_name)

    for place in log_places(config):
        logs = logs_at(place)
        if not logs:
            note(default_path or DEFAULT_LOG_PATH, COMBINED, [], place)
            continue
        for node in logs:
            if not node.args or node.args[0] == "off":
                continue
            params = [a for a in node.args[1:] if a == "gzip" or "=" in a]
            note(node.args[0], format_of(node), params, place)
    return list(targets.values())


UPSTREAM_PASSES = (
    "proxy_pass",
    "fastcgi_pass",
    "uwsgi_pass",
    "scgi_pass",
    "grpc_pass",
    "memcached_pass",
)


def goes_upstream(config: ParsedConfig) -> bool:
    """Whether any http request can be passed to an upstream (so upstream times exist)."""
    return any(
        node.module_scope == "http" for name in UPSTREAM_PASSES for node in config.find(name)
    )


def caches(config: ParsedConfig) -> bool:
    """Whether any location passes to an upstream through a cache (so a hit ratio exists)."""
    # Imported here: the cache rules import this module for the log formats they check.
    from nginx_fleet_analyzer.rules.cache import cache_uses

    return any(cache_uses(config, prefix) for prefix in ("proxy", "fastcgi", "uwsgi", "scgi"))
