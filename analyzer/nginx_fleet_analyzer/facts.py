"""Host facts and recent metrics a rule may use; every figure is optional.

`HostFacts.from_dict` reads the agent's `facts` object (docs/agent-protocol.md) as sent, so the
CLI's `--facts FILE` can take a file saved from a push. Keys read (all optional):

- `nginx_version` ("1.22.1" or "nginx/1.22.1"), `nginx_configure_args` (the `nginx -V` line),
  `nginx_modules` (list, e.g. "http_ssl_module"), `nginx_openssl_version` ("3.0.19", the
  OpenSSL nginx runs with, from `nginx -V`);
- `cpu_count` (cores the host has), `mem_total_bytes` (MemTotal in bytes), `somaxconn`;
- `worker_nofile_limit` or `worker_fds_limit` (the workers' real soft "Max open files"; the
  agent sends it per sample as `nginx_processes.worker_fds_limit`, the backend merges it in).

Numbers may be JSON numbers or digit strings; other keys (`kernel`, `os`, ...) are ignored.
A whole push body (what `nginx-fleet-agent collect --once` prints) is accepted too: its `facts`
object, plus `worker_fds_limit` from the newest sample's `nginx_processes`.
Rules that depend on a missing host fact speak at most as info and name the fact.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from nginx_fleet_analyzer.record import Record, field_names

Version = tuple[int, int, int]

# Patterns, compiled (and cached by re) on first use: a CLI run without facts needs none.
_VERSION = r"(\d+)\.(\d+)(?:\.(\d+))?"
_CONFIGURE_FLAG = r"--(with|without)-([A-Za-z0-9_]+?)(?:=\S*)?(?=\s|$)"
_ADDED_MODULE = r"--add(?:-dynamic)?-module=(\S+)"


def parse_version(text: str | None) -> Version | None:
    """'1.22.1' or 'nginx/1.25.3' -> (1, 22, 1); None when there is no version in it."""
    if not text:
        return None
    match = re.search(_VERSION, text)
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3] or 0)


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None


def _modules_from_configure(args: str) -> tuple[set[str], set[str]]:
    """Modules added (`--with-X`) and removed (`--without-X`) by configure args."""
    added: set[str] = set()
    removed: set[str] = set()
    for kind, name in re.findall(_CONFIGURE_FLAG, args):
        (added if kind == "with" else removed).add(name)
    return added, removed


def _facts_of_payload(payload: Mapping[str, object]) -> dict[str, object]:
    """The facts of a whole push body, with the workers' fd limit of its newest sample."""
    given = payload["facts"]
    facts: dict[str, object] = dict(given) if isinstance(given, Mapping) else {}
    samples = payload.get("samples")
    if isinstance(samples, list) and samples and isinstance(samples[-1], Mapping):
        processes = samples[-1].get("nginx_processes")
        if isinstance(processes, Mapping) and "worker_fds_limit" in processes:
            facts.setdefault("worker_fds_limit", processes["worker_fds_limit"])
    return facts


class HostFacts(Record):
    """What the agent reported about the host and its nginx build."""

    __slots__ = (
        "cpu_count",
        "disabled_modules",
        "extra_modules",
        "mem_total_bytes",
        "modules",
        "modules_known",
        "nginx_version",
        "openssl_version",
        "somaxconn",
        "worker_nofile_limit",
    )

    nginx_version: Version | None
    cpu_count: int | None
    mem_total_bytes: int | None
    # Modules the build names (nginx -V), e.g. 'http_ssl_module', 'stream'.
    modules: frozenset[str]
    # Default modules the build left out (`--without-http_gzip_module`).
    disabled_modules: frozenset[str]
    # True when nginx -V was seen at all, so absent optional modules are really absent.
    modules_known: bool
    # Third-party modules compiled in (`--add-module=PATH`), by directory name.
    extra_modules: frozenset[str]
    worker_nofile_limit: int | None
    somaxconn: int | None
    # The OpenSSL version nginx runs with (decides whether RC4/3DES suites exist at all).
    openssl_version: Version | None

    def __init__(
        self,
        nginx_version: Version | None = None,
        cpu_count: int | None = None,
        mem_total_bytes: int | None = None,
        modules: frozenset[str] = frozenset(),
        disabled_modules: frozenset[str] = frozenset(),
        modules_known: bool = False,
        extra_modules: frozenset[str] = frozenset(),
        worker_nofile_limit: int | None = None,
        somaxconn: int | None = None,
        openssl_version: Version | None = None,
    ) -> None:
        self.nginx_version = nginx_version
        self.cpu_count = cpu_count
        self.mem_total_bytes = mem_total_bytes
        self.modules = modules
        self.disabled_modules = disabled_modules
        self.modules_known = modules_known
        self.extra_modules = extra_modules
        self.worker_nofile_limit = worker_nofile_limit
        self.somaxconn = somaxconn
        self.openssl_version = openssl_version

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> HostFacts:
        """Build from the agent's `facts` object (docs/agent-protocol.md); unknown keys ignored."""
        if not data:
            return cls()
        if isinstance(data.get("facts"), Mapping):
            data = _facts_of_payload(data)
        modules: set[str] = set()
        disabled: set[str] = set()
        listed = data.get("nginx_modules")
        if isinstance(listed, list | tuple):
            modules.update(str(m) for m in listed)
        extra: set[str] = set()
        configure = data.get("nginx_configure_args")
        if isinstance(configure, str):
            added, removed = _modules_from_configure(configure)
            modules |= added
            disabled |= removed
            extra.update(
                p.rstrip("/").rsplit("/", 1)[-1] for p in re.findall(_ADDED_MODULE, configure)
            )
        version = data.get("nginx_version")
        openssl = data.get("nginx_openssl_version")
        nofile = data.get("worker_nofile_limit", data.get("worker_fds_limit"))
        return cls(
            nginx_version=parse_version(version) if isinstance(version, str) else None,
            cpu_count=_int(data.get("cpu_count")),
            mem_total_bytes=_int(data.get("mem_total_bytes")),
            modules=frozenset(modules),
            disabled_modules=frozenset(disabled),
            modules_known=isinstance(listed, list | tuple) or isinstance(configure, str),
            extra_modules=frozenset(extra),
            worker_nofile_limit=_int(nofile),
            somaxconn=_int(data.get("somaxconn")),
            openssl_version=parse_version(openssl) if isinstance(openssl, str) else None,
        )

    def has_version(self, at_least: Version) -> bool | None:
        """Whether the reported nginx is at least this version; None when unknown."""
        return None if self.nginx_version is None else self.nginx_version >= at_least


class MetricsWindow(Record):
    """Figures over the last hour; None means not measured (rules needing it stay silent).

    `cpu_pct` is the whole host's mean CPU; rules about nginx's own CPU cost use the
    `nginx_cpu_pct_*` figures: the CPU time of nginx's processes as a percent of all the host's
    cores (100 = every core busy with nginx), its mean and 95th percentile over the window's
    samples; `nginx_cpu_source` says whose time it is ('workers', or 'master+workers' from
    agents that send only the total). Active connections likewise: `peak_active` is the single
    highest reading (one spike), `active_p95` the 95th percentile (None with too few samples to
    stand for more than one reading) and `avg_active` the mean; rules judge the sustained ones.
    From the access logs (docs/access-log.md): `cache_hit_ratio`, `status_2xx_get_ratio`,
    `request_time_p95_s` (of all logged requests) and `share_5xx` (of all logged requests).
    """

    __slots__ = (
        "accepts_delta",
        "active_p95",
        "avg_active",
        "avg_waiting",
        "cache_hit_ratio",
        "cpu_pct",
        "handled_delta",
        "listen_drops_delta",
        "listen_overflows_delta",
        "nginx_cpu_pct_mean",
        "nginx_cpu_pct_p95",
        "nginx_cpu_source",
        "peak_active",
        "req_per_s",
        "request_time_p95_s",
        "share_5xx",
        "status_2xx_get_ratio",
        "upstream_req_per_s",
        "waiting_ratio",
    )

    peak_active: float | None
    avg_active: float | None
    avg_waiting: float | None
    waiting_ratio: float | None
    accepts_delta: float | None
    handled_delta: float | None
    req_per_s: float | None
    cpu_pct: float | None
    listen_overflows_delta: float | None
    listen_drops_delta: float | None
    cache_hit_ratio: float | None
    upstream_req_per_s: dict[str, float]
    status_2xx_get_ratio: float | None
    nginx_cpu_pct_mean: float | None
    nginx_cpu_pct_p95: float | None
    nginx_cpu_source: str | None
    active_p95: float | None
    request_time_p95_s: float | None
    share_5xx: float | None

    def __init__(
        self,
        peak_active: float | None = None,
        avg_active: float | None = None,
        avg_waiting: float | None = None,
        waiting_ratio: float | None = None,
        accepts_delta: float | None = None,
        handled_delta: float | None = None,
        req_per_s: float | None = None,
        cpu_pct: float | None = None,
        listen_overflows_delta: float | None = None,
        listen_drops_delta: float | None = None,
        cache_hit_ratio: float | None = None,
        upstream_req_per_s: dict[str, float] | None = None,
        status_2xx_get_ratio: float | None = None,
        nginx_cpu_pct_mean: float | None = None,
        nginx_cpu_pct_p95: float | None = None,
        nginx_cpu_source: str | None = None,
        active_p95: float | None = None,
        request_time_p95_s: float | None = None,
        share_5xx: float | None = None,
    ) -> None:
        self.peak_active = peak_active
        self.avg_active = avg_active
        self.avg_waiting = avg_waiting
        self.waiting_ratio = waiting_ratio
        self.accepts_delta = accepts_delta
        self.handled_delta = handled_delta
        self.req_per_s = req_per_s
        self.cpu_pct = cpu_pct
        self.listen_overflows_delta = listen_overflows_delta
        self.listen_drops_delta = listen_drops_delta
        self.cache_hit_ratio = cache_hit_ratio
        self.upstream_req_per_s = {} if upstream_req_per_s is None else upstream_req_per_s
        self.status_2xx_get_ratio = status_2xx_get_ratio
        self.nginx_cpu_pct_mean = nginx_cpu_pct_mean
        self.nginx_cpu_pct_p95 = nginx_cpu_pct_p95
        self.nginx_cpu_source = nginx_cpu_source
        self.active_p95 = active_p95
        self.request_time_p95_s = request_time_p95_s
        self.share_5xx = share_5xx

    def traffic_evidence(self) -> dict[str, object]:
        """What the access logs said over the window, for a finding's evidence (may be empty)."""
        figures = {
            "request_time_p95_s": self.request_time_p95_s,
            "share_5xx": self.share_5xx,
            "cache_hit_ratio": self.cache_hit_ratio,
        }
        return {name: value for name, value in figures.items() if value is not None}

    def sustained_nginx_cpu(self) -> tuple[float, str] | None:
        """(figure, which) of nginx's CPU in % of all cores: p95 when measured, else the mean."""
        if self.nginx_cpu_pct_p95 is not None:
            return self.nginx_cpu_pct_p95, "p95"
        if self.nginx_cpu_pct_mean is not None:
            return self.nginx_cpu_pct_mean, "mean"
        return None

    def nginx_cpu_evidence(self) -> dict[str, object]:
        """The nginx CPU figures as a finding's evidence, saying which figure and whose CPU."""
        figure = self.sustained_nginx_cpu()
        return {
            "nginx_cpu_pct": round(figure[0], 1) if figure else None,
            "nginx_cpu_figure": (
                f"{figure[1]} over the window, % of all cores, "
                f"nginx {self.nginx_cpu_source or 'processes'}"
                if figure
                else "not reported (the agent sends no nginx process CPU)"
            ),
            "nginx_cpu_pct_mean": self.nginx_cpu_pct_mean,
            "nginx_cpu_pct_p95": self.nginx_cpu_pct_p95,
        }

    def sustained_active(self) -> tuple[float, str] | None:
        """(figure, which) of active connections: p95 when measured, else the mean; never the
        single peak, which one burst of slow clients or a health-check storm can make."""
        if self.active_p95 is not None:
            return self.active_p95, "p95"
        if self.avg_active is not None:
            return self.avg_active, "mean"
        return None

    @property
    def drops(self) -> float | None:
        """Connections accepted but not handled in the window (accepts - handled)."""
        if self.accepts_delta is None or self.handled_delta is None:
            return None
        return self.accepts_delta - self.handled_delta

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> MetricsWindow:
        """Build from a dict keyed by field name; non-numeric values are treated as absent."""
        if not data:
            return cls()
        values: dict[str, object] = {}
        for name in field_names(cls):
            raw = data.get(name)
            if name == "upstream_req_per_s":
                if isinstance(raw, Mapping):
                    values[name] = {
                        str(k): v
                        for k, v in ((k, _float(v)) for k, v in raw.items())
                        if v is not None
                    }
                continue
            if name == "nginx_cpu_source":
                values[name] = raw if isinstance(raw, str) else None
                continue
            values[name] = _float(raw)
        return cls(**values)  # type: ignore[arg-type]
