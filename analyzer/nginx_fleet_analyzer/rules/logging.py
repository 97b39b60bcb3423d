"""Logging: buffered access logs, error log level, latency fields in the log format."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.access_logs import (
    COMBINED_FORMAT,
    access_logs,
    format_of,
    formats_in_use,
    log_formats,
)
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.record import replace
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import make_fix

TIMING_FIELDS = " rt=$request_time urt=$upstream_response_time ucs=$upstream_cache_status"
BUSY_REQ_PER_S = 1000.0
NOISY_LEVELS = ("debug", "info")


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
