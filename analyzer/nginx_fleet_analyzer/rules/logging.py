"""Logging: buffered access logs, error log level, latency fields in the log format."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.effective import entries
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import replace
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import make_fix

# nginx's built-in `combined` format, which has no timing or cache fields.
COMBINED_FORMAT = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent"'
)
TIMING_FIELDS = " rt=$request_time urt=$upstream_response_time ucs=$upstream_cache_status"
BUSY_REQ_PER_S = 1000.0
NOISY_LEVELS = ("debug", "info")


def _log_places(config: ParsedConfig) -> list[Directive]:
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


def formats_at(place: Directive) -> list[str]:
    """Log formats written for requests handled at a place ('combined' by default, none if off)."""
    logs = logs_at(place)
    if not logs:
        return ["combined"]
    return [format_of(d) for d in logs if d.args and d.args[0] != "off"]


def access_logs(config: ParsedConfig) -> list[Directive]:
    """http `access_log` directives in force somewhere that write somewhere (not `off`)."""
    used = {id(d): d for place in _log_places(config) for d in logs_at(place)}
    return [d for d in used.values() if d.args and d.args[0] != "off"]


def format_of(access_log: Directive) -> str:
    """The log format an access_log writes ('combined' unless another is named)."""
    args = access_log.args
    named = len(args) > 1 and "=" not in args[1] and args[1] != "gzip"
    return args[1] if named else "combined"


def formats_in_use(config: ParsedConfig) -> list[str]:
    """Names of the log formats the access logs in force write (nginx logs `combined` unset)."""
    places = _log_places(config)
    if not places:
        return ["combined"]
    return list(dict.fromkeys(name for place in places for name in formats_at(place)))


def log_formats(config: ParsedConfig) -> dict[str, Directive]:
    """The http `log_format` directives by name."""
    return {d.args[0]: d for d in config.find("log_format") if d.args and d.module_scope == "http"}


@rule("L-buffer", Category.LOGGING, Severity.INFO)
def check_access_log_buffer(ctx: RuleContext) -> Iterator[Finding]:
    """A busy host writes the access log once per request."""
    rate = ctx.metrics.req_per_s if ctx.metrics is not None else None
    if rate is None or rate <= BUSY_REQ_PER_S:
        return
    for node in access_logs(ctx.config):
        if node.args[0].startswith("syslog:") or any(a.startswith("buffer=") for a in node.args):
            continue
        params = [a for a in node.args[2:] if not a.startswith("flush=")]
        args = [node.args[0], format_of(node), *params, "buffer=64k", "flush=5s"]
        yield get_rule("L-buffer").finding(
            at=node,
            message=(
                f"access_log {node.args[0]} has no buffer= while the host serves {rate:.0f} "
                "req/s: one write() per request"
            ),
            evidence={"req_per_s": rate, "access_log": node.args},
            fix=make_fix("set", "access_log", args, node),
        )


@rule("L-error-level", Category.LOGGING, Severity.WARNING)
def check_error_log_level(ctx: RuleContext) -> Iterator[Finding]:
    """Debug or info error logging costs disk and CPU."""
    for node in ctx.config.find("error_log"):
        level = node.args[1] if len(node.args) > 1 else None
        if level not in NOISY_LEVELS:
            continue
        yield get_rule("L-error-level").finding(
            at=node,
            message=f"error_log {node.args[0]} logs at level {level}: heavy disk writes and CPU",
            evidence={"error_log": node.args[0], "level": level},
            fix=make_fix("set", "error_log", [node.args[0], "warn"], node),
        )


def _writes_timed(access_log: Directive) -> Fix:
    """The access_log line changed to write the `timed` format, its other parameters kept."""
    path, *rest = access_log.args
    if rest and format_of(access_log) == rest[0]:
        rest = rest[1:]
    return make_fix("set", "access_log", [path, "timed", *rest], access_log)


@rule("L-fields", Category.LOGGING, Severity.INFO)
def check_log_fields(ctx: RuleContext) -> Iterator[Finding]:
    """The access log format records no request time, so latency cannot be measured."""
    config = ctx.config
    http = config.http()
    if http is None:
        return
    formats = log_formats(config)
    logs = access_logs(config)
    for name in dict.fromkeys(formats_in_use(config)):
        custom = formats.get(name)
        text = " ".join(custom.args[1:]) if custom is not None else COMBINED_FORMAT
        if "$request_time" in text:
            continue
        fix: Fix
        if custom is not None:
            at = custom
            fix = make_fix("set", "log_format", [*custom.args, TIMING_FIELDS], custom)
        else:
            writers = [d for d in logs if format_of(d) == name]
            at = writers[0] if writers else http
            fix = replace(
                make_fix(
                    "add",
                    "log_format",
                    ["timed", COMBINED_FORMAT + TIMING_FIELDS],
                    http,
                    "then write it: access_log PATH timed;",
                ),
                also=tuple(_writes_timed(d) for d in writers),
            )
        yield get_rule("L-fields").finding(
            at=at,
            directive="log_format",
            message=(
                f"log format {name} has no $request_time: latency percentiles cannot be "
                "computed from the access log"
            ),
            evidence={"log_format": name, "builtin": custom is None},
            fix=fix,
        )
