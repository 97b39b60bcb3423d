"""Access-log payloads as the agent sends them, and log rows written straight to the database."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from app.access_log.fields import SITE_COUNTERS
from app.access_log.models import LogStats, LogUpstreamStats
from app.core.db import SessionLocal
from nginx_fleet_analyzer.latency_sketch import Sketch
from sqlalchemy import insert

from tests.agents.payloads import sample

ACCESS_LOG_PATH = "/var/log/nginx/access.log"


def sketch_json(values: Iterable[float], level: int = 0) -> dict[str, Any]:
    """The protocol form of a sketch holding these values (in bins of `level`: the rollups'
    are app.access_log.aggregate.ROLLUP_LEVEL)."""
    sketch = Sketch(level=level)
    for value in values:
        sketch.add(value)
    data = sketch.to_json()
    assert isinstance(data, dict)
    return data


def latencies(count: int, *, seed: int, median: float = 0.05) -> list[float]:
    """count request times: log-normal around `median` seconds, a tenth of them 0.000."""
    rng = random.Random(seed)
    return [
        0.0 if rng.random() < 0.1 else round(rng.lognormvariate(0, 1.2) * median, 3)
        for _ in range(count)
    ]


def log_file(
    *,
    path: str = ACCESS_LOG_PATH,
    formats: Sequence[str] = ("main",),
    state: str = "ok",
    reason: str | None = None,
    lines: int = 100,
    unparsed: int = 0,
    missing_fields: Sequence[str] = (),
    unparsed_sample: str | None = None,
) -> dict[str, Any]:
    """One files[] entry of the protocol."""
    return {
        "path": path,
        "formats": list(formats),
        "state": state,
        "reason": reason,
        "lines": lines,
        "unparsed": unparsed,
        "unparsed_sample": unparsed_sample,
        "unparsed_format": formats[0] if unparsed_sample else None,
        "missing_fields": list(missing_fields),
        "site_field": "host",
        "conditional": False,
    }


def site(
    name: str = "shop.example.com",
    *,
    times: Sequence[float] = (0.01, 0.02, 0.2),
    upstream_times: Sequence[float] | None = None,
    status: dict[str, int] | None = None,
    cache: dict[str, int] | None = None,
    bytes_sent: int | None = 4096,
    get_2xx: int | None = None,
    upstream_errors: int | None = 0,
) -> dict[str, Any]:
    """One sites[] entry whose request count is the number of `times`."""
    requests = len(times)
    entry: dict[str, Any] = {
        "site": name,
        "requests": requests,
        "status": status
        if status is not None
        else {"1xx": 0, "2xx": requests, "3xx": 0, "4xx": 0, "5xx": 0,
              "499": 0, "500": 0, "502": 0, "503": 0, "504": 0},
        "bytes_sent": bytes_sent,
        "get_2xx": requests if get_2xx is None else get_2xx,
        "request_time": sketch_json(times),
        "upstream_time": sketch_json(times if upstream_times is None else upstream_times),
        "upstream_errors": upstream_errors,
    }  # fmt: skip
    if cache is not None:
        entry["cache"] = cache
    return entry


def access_log(
    sites: Sequence[dict[str, Any]] = (),
    *,
    files: Sequence[dict[str, Any]] | None = None,
    upstreams: Sequence[dict[str, Any]] = (),
    top_paths: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A samples[].access_log object."""
    log: dict[str, Any] = {
        "alpha": 0.01,
        "files": list(files) if files is not None else [log_file()],
        "sites": list(sites),
        "upstreams": list(upstreams),
    }
    if top_paths is not None:
        log["top_paths"] = list(top_paths)
    return log


def log_sample(seq: int, ts: datetime, log: dict[str, Any] | None) -> dict[str, Any]:
    """A complete sample carrying an access_log object (none when log is None)."""
    item = sample(seq, ts, accepts=100 * seq, requests=500 * seq)
    if log is not None:
        item["access_log"] = log
    return item


def log_row(
    host_id: int, ts: datetime, seq: int, site_name: str = "shop.example.com", **figures: Any
) -> dict[str, Any]:
    """A log_stats row, every counter None and no sketch unless given (`times` makes the
    request_time sketch, `upstream_times` the upstream_time one)."""
    times = figures.pop("times", None)
    upstream_times = figures.pop("upstream_times", None)
    row: dict[str, Any] = dict.fromkeys(SITE_COUNTERS)
    row.update(
        host_id=host_id,
        ts=ts,
        seq=seq,
        site=site_name,
        requests=len(times) if times is not None else 0,
        request_time=sketch_json(times) if times else None,
        upstream_time=sketch_json(upstream_times) if upstream_times else None,
        top_paths=None,
    )
    row.update(figures)
    return row


def insert_log_rows(
    rows: Sequence[dict[str, Any]], upstreams: Sequence[dict[str, Any]] = ()
) -> None:
    """Bulk-insert log_stats (and log_upstream_stats) rows and commit."""
    with SessionLocal() as session:
        if rows:
            session.execute(insert(LogStats), list(rows))
        if upstreams:
            session.execute(insert(LogUpstreamStats), list(upstreams))
        session.commit()
