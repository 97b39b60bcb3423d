"""Buffers and memory: worst-case proxy buffer memory, header buffers, request body buffers."""

from __future__ import annotations

import math
from collections.abc import Iterator

from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import (
    format_bytes,
    locations_in,
    make_fix,
    parse_size,
    set_or_add,
    setting,
    unique_by_anchor,
)
from nginx_fleet_analyzer.rules.workers import events_block, worker_connections, worker_count

# One memory page on x86-64 Linux: nginx's default proxy buffer size.
PAGE = 4096
DEFAULT_PROXY_BUFFERS = (8, PAGE)
DEFAULT_HEADER_BUFFERS = (4, 8 * 1024)
DEFAULT_MAX_BODY = 1024 * 1024
MEMORY_SHARE = 0.5
# Without the host's memory, a worst case past 1 GiB is worth a note: over half of a 2 GiB VM.
NOTE_WORST_CASE = 1024**3


def proxy_buffers_at(
    ctx: RuleContext, location: Directive
) -> tuple[Directive | None, int, int, int]:
    """(proxy_buffers node, count, size, proxy_buffer_size) in force at a location."""
    node = setting(ctx.config, "proxy_buffers", location)
    count, size = DEFAULT_PROXY_BUFFERS
    if node is not None and len(node.args) == 2 and node.args[0].isdigit():
        count, size = int(node.args[0]), parse_size(node.args[1]) or size
    first = setting(ctx.config, "proxy_buffer_size", location)
    first_size = parse_size(first.args[0]) if first is not None and first.args else None
    return node, count, size, first_size or PAGE


@rule("B-proxy-memory", Category.BUFFERS, Severity.WARNING)
def check_proxy_memory(ctx: RuleContext) -> Iterator[Finding]:
    """Proxy buffers at full load would take more than half of the host's memory."""
    memory = ctx.facts.mem_total_bytes if ctx.facts is not None else None
    # 'auto' without the CPU count: one worker is the lower bound of the worst case.
    counted = worker_count(ctx)
    workers = counted or 1
    wc_node, connections = worker_connections(ctx.config)
    if connections <= 0:
        return
    proxied = [
        location
        for server in ctx.config.servers()
        for location in locations_in(server)
        if location.child("proxy_pass") is not None
    ]
    if not proxied:
        return
    worst = max(proxied, key=lambda loc: _per_connection(ctx, loc))
    node, count, size, first_size = proxy_buffers_at(ctx, worst)
    per_connection = count * size + first_size
    total = per_connection * connections * workers
    certain = memory is not None and total > MEMORY_SHARE * memory
    if not certain:
        yield from _possible_proxy_memory(ctx, worst, total, workers, counted, memory)
        return
    assert memory is not None
    budget = MEMORY_SHARE * memory / (connections * workers)
    fitting_count = math.floor((budget - first_size) / size)
    fix: Fix | None
    anchor: Directive | None
    if node is not None and fitting_count >= 2:
        anchor = node
        fix = make_fix("set", "proxy_buffers", [str(fitting_count), node.args[1]], node)
    else:
        fitting_connections = max(1, math.floor(MEMORY_SHARE * memory / (per_connection * workers)))
        anchor = wc_node or events_block(ctx.config)
        if anchor is None:
            return
        value = [str(fitting_connections)]
        fix = set_or_add("worker_connections", value, wc_node, anchor)
    shown_workers = f"{workers} workers" if counted else "1 worker (at least; 'auto')"
    yield get_rule("B-proxy-memory").finding(
        at=anchor,
        directive="proxy_buffers",
        message=(
            f"worst case proxy buffers ({count} x {format_bytes(size)} + "
            f"{format_bytes(first_size)}) x {connections} connections x {shown_workers} = "
            f"{total / 1024**3:.1f} GiB, over half of the host's {memory / 1024**3:.1f} GiB"
        ),
        evidence={
            "proxy_buffers": [count, size],
            "proxy_buffer_size": first_size,
            "worker_connections": connections,
            "workers": workers,
            "worst_case_bytes": total,
            "mem_total_bytes": memory,
            "location": worst.label,
        },
        fix=fix,
    )


def _possible_proxy_memory(
    ctx: RuleContext,
    worst: Directive,
    total: int,
    workers: int,
    counted: int | None,
    memory: int | None,
) -> Iterator[Finding]:
    """A note when the worst case is large but a missing host fact decides whether it fits."""
    if total < NOTE_WORST_CASE:
        return
    if memory is not None and counted:
        return  # Every fact known and it fits.
    needs = [
        name for name, known in (("mem_total_bytes", memory), ("cpu_count", counted)) if not known
    ]
    node, count, size, first_size = proxy_buffers_at(ctx, worst)
    wc_node, connections = worker_connections(ctx.config)
    anchor = node or wc_node or events_block(ctx.config)
    if anchor is None:
        return
    facts = " and ".join(
        {"mem_total_bytes": "the host's memory", "cpu_count": "the CPU count ('auto' workers)"}[n]
        for n in needs
    )
    per = "" if counted else " per worker"
    yield get_rule("B-proxy-memory").finding(
        at=anchor,
        directive="proxy_buffers",
        severity=Severity.INFO,
        message=(
            f"worst case proxy buffers ({count} x {format_bytes(size)} + "
            f"{format_bytes(first_size)}) x {connections} connections = "
            f"{total / 1024**3:.1f} GiB{per}; with {facts} this becomes a warning when it "
            "exceeds half of the host's memory"
        ),
        evidence={
            "proxy_buffers": [count, size],
            "proxy_buffer_size": first_size,
            "worker_connections": connections,
            "workers": workers if counted else None,
            "worst_case_bytes": total,
            "mem_total_bytes": memory,
            "location": worst.label,
            "needs": needs,
        },
    )


def _per_connection(ctx: RuleContext, location: Directive) -> int:
    _, count, size, first_size = proxy_buffers_at(ctx, location)
    return count * size + first_size


@rule("B-header-buffers", Category.BUFFERS, Severity.WARNING)
def check_header_buffers(ctx: RuleContext) -> Iterator[Finding]:
    """Header buffers below `4 8k` turn big cookies and URLs into 400/414 errors."""
    default_count, default_size = DEFAULT_HEADER_BUFFERS
    for node in ctx.config.find("large_client_header_buffers"):
        if len(node.args) != 2 or not node.args[0].isdigit():
            continue
        count, size = int(node.args[0]), parse_size(node.args[1])
        if size is None or (count >= default_count and size >= default_size):
            continue
        fixed = [str(max(count, default_count)), format_bytes(max(size, default_size))]
        yield get_rule("B-header-buffers").finding(
            at=node,
            message=(
                f"large_client_header_buffers {' '.join(node.args)} is below nginx's default "
                "4 8k: requests with big cookies or long URLs get 400/414 errors"
            ),
            evidence={"count": count, "size_bytes": size, "default": "4 8k"},
            fix=make_fix("set", "large_client_header_buffers", fixed, node),
        )


@rule("B-body-buffer", Category.BUFFERS, Severity.INFO)
def check_body_buffer(ctx: RuleContext) -> Iterator[Finding]:
    """Uploads are allowed but bodies past the small default buffer spill to temp files."""
    pairs: list[tuple[Directive, Finding]] = []
    for node in ctx.config.find("client_max_body_size"):
        block = node.parent
        size = parse_size(node.args[0]) if node.args else None
        if block is None or node.module_scope != "http" or size is None:
            continue
        # 0 disables the limit: the block takes uploads of any size.
        if size != 0 and size <= DEFAULT_MAX_BODY:
            continue
        if setting(ctx.config, "client_body_buffer_size", node) is not None:
            continue
        pairs.append(
            (
                block,
                get_rule("B-body-buffer").finding(
                    at=node,
                    directive="client_body_buffer_size",
                    message=(
                        f"{block.label} accepts uploads up to {node.args[0]} with the default "
                        "client_body_buffer_size (8k/16k): larger bodies spill to temp files"
                    ),
                    evidence={
                        "client_max_body_size": node.args[0],
                        "client_body_buffer_size": "default",
                    },
                    fix=make_fix("add", "client_body_buffer_size", ["128k"], block),
                ),
            )
        )
    yield from unique_by_anchor(pairs)
