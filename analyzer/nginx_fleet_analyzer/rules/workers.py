"""Workers and connections: worker count, connection limits, fd limits, drops, accept tuning."""

from __future__ import annotations

import math
from collections.abc import Iterator

from nginx_fleet_analyzer.effective import Role, serving, value
from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import add_to_main, is_on, main_anchor, make_fix

# nginx's compiled-in defaults.
DEFAULT_WORKER_CONNECTIONS = 512
DEFAULT_WORKER_PROCESSES = 1
# Linux default of `listen … backlog=` (NGX_LISTEN_BACKLOG).
DEFAULT_LISTEN_BACKLOG = 511
RECOMMENDED_NOFILE = 65535
RECOMMENDED_BACKLOG = 4096


def events_block(config: ParsedConfig) -> Directive | None:
    """The `events` block, if any."""
    return next((d for d in config.top("events") if d.block is not None), None)


def worker_connections(config: ParsedConfig) -> tuple[Directive | None, int]:
    """The `worker_connections` directive and its value (512 when absent)."""
    events = events_block(config)
    node = events.child("worker_connections") if events is not None else None
    if node is not None and node.args and node.args[0].isdigit():
        return node, int(node.args[0])
    return node, DEFAULT_WORKER_CONNECTIONS


def worker_processes(config: ParsedConfig) -> Directive | None:
    """The top-level `worker_processes` directive that nginx uses (the last one)."""
    found = config.top("worker_processes")
    return found[-1] if found else None


def worker_count(ctx: RuleContext) -> int | None:
    """Workers that run: the number, CPU count for 'auto', 1 when absent; None if unknown."""
    node = worker_processes(ctx.config)
    if node is None or not node.args:
        return DEFAULT_WORKER_PROCESSES
    value = node.args[0]
    if value.isdigit():
        return int(value) or None
    if value == "auto" and ctx.facts is not None:
        return ctx.facts.cpu_count or None
    return None


def nofile_limits(ctx: RuleContext) -> tuple[Directive | None, int | None, int | None]:
    """`worker_rlimit_nofile` (node, value) and the workers' real Max open files, each if known."""
    found = ctx.config.top("worker_rlimit_nofile")
    node = found[-1] if found else None
    configured = (
        int(node.args[0])
        if node is not None and node.args[0:1] and node.args[0].isdigit()
        else None
    )
    real = ctx.facts.worker_nofile_limit if ctx.facts is not None else None
    return node, configured, real


def recommended_connections(cpus: int | None) -> int:
    """The catalogue's worker_connections for a core count: 8192 for 8+ cores, else 4096."""
    return 8192 if cpus is not None and cpus >= 8 else 4096


def whole_config(config: ParsedConfig) -> bool:
    """Whether this is a main nginx.conf (it has `events`), not a site file read alone."""
    return events_block(config) is not None


def workers_busy_pct(ctx: RuleContext, workers: int, cpus: int) -> float | None:
    """How busy each worker's core was (% of one core, sustained figure), if measured."""
    figure = ctx.metrics.sustained_nginx_cpu() if ctx.metrics is not None else None
    return figure[0] * cpus / workers if figure is not None else None


@rule("W-processes", Category.WORKERS, Severity.WARNING)
def check_worker_processes(ctx: RuleContext) -> Iterator[Finding]:
    """A fixed worker count below the CPU count leaves cores idle."""
    cpus = ctx.facts.cpu_count if ctx.facts is not None else None
    node = worker_processes(ctx.config)
    value = node.args[0] if node is not None and node.args else str(DEFAULT_WORKER_PROCESSES)
    if not value.isdigit() or (cpus and int(value) >= cpus):
        return
    if not cpus and (node is None and not whole_config(ctx.config)):
        return
    shown = f"worker_processes {value}" + ("" if node is not None else " (nginx's default)")
    fix = (
        make_fix("set", "worker_processes", ["auto"], node)
        if node is not None
        else add_to_main(ctx.config, "worker_processes", ["auto"])
    )
    evidence: dict[str, object] = {
        "worker_processes": value,
        "default_used": node is None,
        "cpu_count": cpus,
    }
    if ctx.metrics is not None:
        evidence |= ctx.metrics.nginx_cpu_evidence()
    if not cpus:
        # Whether cores sit idle depends on the host: without its CPU count, only a note.
        yield get_rule("W-processes").finding(
            at=node or main_anchor(ctx.config),
            directive="worker_processes",
            severity=Severity.INFO,
            message=(
                f"{shown} is a fixed count: with the host's CPU count this becomes a warning "
                f"when the host has more than {value} core(s); 'auto' follows the host"
            ),
            evidence=evidence | {"needs": "cpu_count"},
            fix=fix,
        )
        return
    busy = workers_busy_pct(ctx, int(value), cpus)
    load = (
        f"; the {value} worker(s) kept their cores {busy:.0f}% busy "
        f"({evidence['nginx_cpu_figure']})"
        if busy is not None
        else ""
    )
    yield get_rule("W-processes").finding(
        at=node or main_anchor(ctx.config),
        directive="worker_processes",
        message=(
            f"{shown} runs {value} worker(s) on a host with {cpus} CPUs; "
            f"'auto' starts one worker per core and follows the host after a resize{load}"
        ),
        evidence=evidence | {"workers_busy_pct": round(busy, 1) if busy is not None else None},
        fix=fix,
    )


@rule("W-connections", Category.WORKERS, Severity.WARNING)
def check_worker_connections(ctx: RuleContext) -> Iterator[Finding]:
    """Too few connection slots for the sustained load or for the host's cores.

    The load is the window's sustained active connections (p95, else the mean), not its single
    peak: one burst is no reason to resize, and the 4x margin already covers bursts."""
    node, connections = worker_connections(ctx.config)
    workers = worker_count(ctx)
    cpus = ctx.facts.cpu_count if ctx.facts is not None else None
    load = ctx.metrics.sustained_active() if ctx.metrics is not None else None
    reasons: list[str] = []
    target = recommended_connections(cpus)
    severity = Severity.WARNING
    if load is not None and workers is not None and workers * connections < 4 * load[0]:
        active, which = load
        reasons.append(
            f"{workers} worker(s) x {connections} connections = {workers * connections} slots, "
            f"below 4x the {active:.0f} active connections sustained over the window ({which}; "
            "a proxied request uses two)"
        )
        needed = math.ceil(4 * active / workers / 1024) * 1024
        target = max(target, needed)
    if cpus is not None and cpus >= 2 and connections <= 1024:
        reasons.append(f"worker_connections {connections} on a host with {cpus} CPUs")
    elif cpus is None and connections <= 1024 and not reasons and whole_config(ctx.config):
        # The ">= 2 cores" condition needs the host's CPU count: only a note without it.
        severity = Severity.INFO
        reasons.append(
            f"worker_connections {connections}: with the host's CPU count this becomes a "
            "warning on 2 or more cores"
        )
    if not reasons or target <= connections:
        return
    events = events_block(ctx.config)
    note = f"each connection needs a file descriptor: keep worker_rlimit_nofile >= {2 * target}"
    if node is not None:
        fix = make_fix("set", "worker_connections", [str(target)], node, note)
    elif events is not None:
        fix = make_fix("add", "worker_connections", [str(target)], events, note)
    else:
        fix = None
    yield get_rule("W-connections").finding(
        at=node or events or main_anchor(ctx.config),
        directive="worker_connections",
        severity=severity,
        message="; ".join(reasons) + f"; raise worker_connections to {target}",
        evidence={
            "worker_connections": connections,
            "default_used": node is None,
            "worker_processes": workers,
            "cpu_count": cpus,
            "active_connections": round(load[0], 1) if load is not None else None,
            "active_figure": f"{load[1]} over the window" if load is not None else "not measured",
            "peak_active": ctx.metrics.peak_active if ctx.metrics is not None else None,
            "recommended": target,
            **(ctx.metrics.traffic_evidence() if ctx.metrics is not None else {}),
        },
        fix=fix,
    )


# Passes whose responses nginx may buffer to a temp file (or keep in a cache file) while
# sending them: the `<prefix>_buffering` / `<prefix>_cache` settings decide.
_FILE_BUFFERING_PASSES = ("proxy", "fastcgi", "uwsgi", "scgi")


def holds_files(config: ParsedConfig) -> bool:
    """Whether a client connection can hold a file descriptor besides its sockets: a static
    file being sent, or an upstream's response buffered to a temp or cache file.

    worker_connections already counts upstream connections; stream proxying, `return` and
    stub_status answers hold no file, so there one fd per connection is the need.
    """
    if serving(config, Role.FILES):
        return True
    for place in serving(config, Role.PASSES):
        for prefix in _FILE_BUFFERING_PASSES:
            if not place.children(f"{prefix}_pass"):
                continue
            buffered = value(f"{prefix}_buffering", place).first != "off"
            if buffered or value(f"{prefix}_cache", place).on:
                return True
    return False


@rule("W-nofile", Category.WORKERS, Severity.WARNING)
def check_worker_nofile(ctx: RuleContext) -> Iterator[Finding]:
    """Workers may run out of file descriptors before they run out of connections."""
    _, connections = worker_connections(ctx.config)
    node, configured, real = nofile_limits(ctx)
    files = holds_files(ctx.config)
    needed = 2 * connections if files else connections
    need = "2 x worker_connections" if files else "worker_connections"
    drops = ctx.metrics.drops if ctx.metrics is not None else None
    dropped = drops is not None and drops > 0
    known = True
    if configured is not None and configured < needed:
        problem = f"worker_rlimit_nofile {configured} is below {need} ({needed})"
    elif real is not None and real < needed:
        problem = f"the workers run with Max open files {real}, below {need} ({needed})"
    elif configured is None and real is None and whole_config(ctx.config):
        # The inherited limit is a host fact: without it the problem is only possible.
        known = False
        problem = (
            "worker_rlimit_nofile is not set, so the workers keep the limit they inherit "
            "(often 1024); with the workers' real Max open files this becomes a warning "
            f"when it is below {needed} ({need})"
        )
    else:
        # The workers' limit covers every connection's fds: nothing to gain.
        return
    if known:
        severity = Severity.ERROR if dropped else Severity.WARNING
    else:
        severity = Severity.WARNING if dropped else Severity.INFO
    value = str(max(RECOMMENDED_NOFILE, needed))
    fix = (
        make_fix("set", "worker_rlimit_nofile", [value], node)
        if node is not None
        else add_to_main(ctx.config, "worker_rlimit_nofile", [value])
    )
    shown = f"; {drops:.0f} connections were dropped in the last hour" if dropped else ""
    yield get_rule("W-nofile").finding(
        at=node or main_anchor(ctx.config),
        directive="worker_rlimit_nofile",
        severity=severity,
        message=f"{problem}; {_FD_WHY[files]}{shown}",
        evidence={
            "worker_connections": connections,
            "worker_rlimit_nofile": configured,
            "worker_max_open_files": real,
            "needed": needed,
            "files_per_connection": files,
            "drops": drops,
            "needs": None if known else "worker_nofile_limit",
        },
        fix=fix,
    )


_FD_WHY = {
    True: (
        "worker_connections counts client and upstream sockets, and a response sent from a "
        "file (static, cached or buffered to a temp file) holds one more fd"
    ),
    False: ("each connection, client or upstream, holds one fd (nothing here sends from files)"),
}


@rule("W-drops", Category.WORKERS, Severity.ERROR)
def check_drops(ctx: RuleContext) -> Iterator[Finding]:
    """Connections were accepted but could not be handled: a worker limit binds."""
    drops = ctx.metrics.drops if ctx.metrics is not None else None
    if drops is None or drops <= 0:
        return
    wc_node, connections = worker_connections(ctx.config)
    nofile_node, configured, real = nofile_limits(ctx)
    # The workers' measured limit wins: it is what the kernel enforces.
    limit = real if real is not None else configured
    events = events_block(ctx.config)
    if limit is not None and limit < 2 * connections:
        binding = "worker_rlimit_nofile"
        value = str(max(RECOMMENDED_NOFILE, 2 * connections))
        fix = (
            make_fix("set", binding, [value], nofile_node)
            if nofile_node is not None
            else add_to_main(ctx.config, binding, [value])
        )
        why = f"the fd limit ({limit}) is below 2 x worker_connections ({2 * connections})"
        anchor = nofile_node or wc_node or events
    else:
        binding = "worker_connections"
        value = str(max(2 * connections, recommended_connections(_cpus(ctx))))
        note = f"keep worker_rlimit_nofile >= {2 * int(value)}"
        if wc_node is not None:
            fix = make_fix("set", binding, [value], wc_node, note)
        elif events is not None:
            fix = make_fix("add", binding, [value], events, note)
        else:
            fix = None
        why = f"worker_connections {connections} is exhausted"
        anchor = wc_node or events
    accepts = ctx.metrics.accepts_delta if ctx.metrics is not None else None
    yield get_rule("W-drops").finding(
        at=anchor or main_anchor(ctx.config),
        directive=binding,
        message=(
            f"{drops:.0f} of {accepts or 0:.0f} accepted connections were dropped in the last "
            f"hour: {why}; raise {binding} to {value}"
        ),
        evidence={
            "drops": drops,
            "accepts_delta": accepts,
            "handled_delta": ctx.metrics.handled_delta if ctx.metrics is not None else None,
            "worker_connections": connections,
            "nofile_limit": limit,
            "binding_limit": binding,
            **(ctx.metrics.traffic_evidence() if ctx.metrics is not None else {}),
        },
        fix=fix,
    )


def _cpus(ctx: RuleContext) -> int | None:
    return ctx.facts.cpu_count if ctx.facts is not None else None


@rule("W-epoll", Category.WORKERS, Severity.INFO)
def check_use_epoll(ctx: RuleContext) -> Iterator[Finding]:
    """`use epoll;` is harmless: nginx already picks the best method (never recommend adding it)."""
    events = events_block(ctx.config)
    if events is None:
        return
    for node in events.children("use"):
        if node.args and node.args[0] == "epoll":
            yield get_rule("W-epoll").finding(
                at=node,
                message=(
                    "'use epoll;' is redundant: nginx picks epoll on Linux by itself; "
                    "the line is harmless and needs no change"
                ),
                evidence={"use": "epoll"},
                fix=make_fix("none", "use", ["epoll"], node, "nothing to change"),
            )


@rule("W-multi-accept", Category.WORKERS, Severity.INFO)
def check_multi_accept(ctx: RuleContext) -> Iterator[Finding]:
    """multi_accept with several workers and no reuseport can pile connections on one worker."""
    events = events_block(ctx.config)
    node = events.child("multi_accept") if events is not None else None
    workers = worker_count(ctx)
    if not is_on(node) or node is None or workers is None or workers < 2:
        return
    listens = [d for server in ctx.config.servers() for d in server.children("listen")]
    if not listens or any("reuseport" in d.args for d in listens):
        return
    busiest = listens[0]
    yield get_rule("W-multi-accept").finding(
        at=node,
        message=(
            f"multi_accept on with {workers} workers and no 'reuseport' listen: one worker can "
            "take most new connections; 'reuseport' lets the kernel spread them"
        ),
        evidence={"multi_accept": "on", "workers": workers, "listens": len(listens)},
        fix=make_fix(
            "set",
            "listen",
            [*busiest.args, "reuseport"],
            busiest,
            "put reuseport on the busiest listen; only once per address:port",
        ),
    )


@rule("W-backlog", Category.WORKERS, Severity.WARNING)
def check_listen_backlog(ctx: RuleContext) -> Iterator[Finding]:
    """The kernel dropped connections from full listen queues before nginx saw them."""
    metrics = ctx.metrics
    if metrics is None:
        return
    overflows = metrics.listen_overflows_delta or 0
    dropped = metrics.listen_drops_delta or 0
    if overflows <= 0 and dropped <= 0:
        return
    listens = [d for server in ctx.config.servers() for d in server.children("listen")]
    if not listens:
        return
    current = max(_backlog(d) for d in listens)
    target = max(RECOMMENDED_BACKLOG, 2 * current)
    somaxconn = ctx.facts.somaxconn if ctx.facts is not None else None
    node = min(listens, key=_backlog)
    note = f"and set net.core.somaxconn >= {target}: the kernel caps the backlog at it"
    if somaxconn is not None:
        note += f" (now {somaxconn})"
    args = [a for a in node.args if not a.startswith("backlog=")] + [f"backlog={target}"]
    yield get_rule("W-backlog").finding(
        at=node,
        message=(
            f"the kernel dropped connections from full listen queues in the last hour "
            f"(ListenOverflows +{overflows:.0f}, ListenDrops +{dropped:.0f}); listen backlog is "
            f"{_backlog(node)}: raise it to {target}"
        ),
        evidence={
            "listen_overflows_delta": overflows,
            "listen_drops_delta": dropped,
            "backlog": _backlog(node),
            "somaxconn": somaxconn,
        },
        fix=make_fix("set", "listen", args, node, note),
    )


def _backlog(listen: Directive) -> int:
    for arg in listen.args:
        if arg.startswith("backlog=") and arg[8:].lstrip("-").isdigit():
            return int(arg[8:])
    return DEFAULT_LISTEN_BACKLOG
