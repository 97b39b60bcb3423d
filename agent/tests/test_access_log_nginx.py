"""The access-log collector against a real caching nginx under a bounded loopback load.

The agent's counts, hit ratio and percentiles are compared with an exact computation over the
same log files (tests/log_traffic.py, which shares nothing with the agent's parser); quantiles
within the sketch's stated relative error, everything else exactly.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from nginx_fleet_agent.access_log.collector import AccessLogCollector
from nginx_fleet_analyzer.latency_sketch import ALPHA, Sketch, exact_quantile

from tests.log_traffic import (
    Exact,
    UpstreamApp,
    exact_from_json,
    exact_from_quoted,
    probe_lines,
    request_plan,
    run_load,
    site_config,
)
from tests.nginx_instance import NGINX, NginxInstance

QUANTILES = (0.5, 0.9, 0.95, 0.99)
HIT_STATUSES = ("HIT", "STALE", "UPDATING", "REVALIDATED")


def start_nginx(
    nginx_factory: Callable[..., NginxInstance],
    tmp_path: Path,
    app: UpstreamApp,
    fmt: str,
    cache_dir: Path,
) -> tuple[NginxInstance, Path, int]:
    """A caching nginx writing `fmt` lines to its own log file, and the lines already in it
    (the start-up probe's), which the agent, opening the file at its end, does not count."""
    prefix = tmp_path / "nginx0"
    log_path = prefix / "logs" / "test.log"
    instance = nginx_factory(site_config(cache_dir, log_path, fmt, app.port))
    return instance, log_path, probe_lines(log_path)


def dump_of(instance: NginxInstance) -> str:
    """`nginx -T` of the instance, as the agent reads it."""
    result = subprocess.run(
        [NGINX, *instance.args, "-T"], capture_output=True, text=True, check=True
    )
    return result.stdout


class Totals:
    """The sum of the collector's intervals, per site and upstream."""

    def __init__(self) -> None:
        self.sites: dict[str, dict[str, Any]] = {}
        self.sketches: dict[tuple[str, str], Sketch] = {}
        self.upstreams: Counter[tuple[str, str]] = Counter()
        self.lines = 0
        self.unparsed = 0
        self.files: list[dict[str, Any]] = []

    def add(self, interval: dict[str, Any] | None) -> None:
        """Add one `collect()` result."""
        assert interval is not None
        self.files = interval["files"]
        for report in interval["files"]:
            self.lines += report["lines"]
            self.unparsed += report["unparsed"]
        for site in interval["sites"]:
            total = self.sites.setdefault(
                site["site"],
                {
                    "requests": 0,
                    "bytes_sent": 0,
                    "get_2xx": 0,
                    "status": Counter(),
                    "cache": Counter(),
                },
            )
            total["requests"] += site["requests"]
            total["bytes_sent"] += site["bytes_sent"]
            total["get_2xx"] += site["get_2xx"]
            total["status"].update(site["status"])
            total["cache"].update(site["cache"])
            for name in ("request_time", "upstream_time"):
                sketch = self.sketches.setdefault((site["site"], name), Sketch())
                sketch.merge(Sketch.from_json(site[name]))
        for upstream in interval["upstreams"]:
            self.upstreams[(upstream["upstream"], "attempts")] += upstream["attempts"]
            self.upstreams[(upstream["upstream"], "errors")] += upstream["errors"]


def collect_during(
    collector: AccessLogCollector, load: Callable[[], Any], totals: Totals, every_s: float = 0.3
) -> None:
    """Run `load` in a thread, collecting every `every_s` meanwhile and twice after it ended."""
    worker = threading.Thread(target=load)
    worker.start()
    while worker.is_alive():
        totals.add(collector.collect())
        worker.join(every_s)
    for _ in range(2):
        time.sleep(every_s)
        totals.add(collector.collect())


def assert_matches(totals: Totals, exact: Exact, lines: int) -> None:
    """Every figure of the agent equals the exact one (quantiles within ALPHA)."""
    assert totals.lines == lines and totals.unparsed == 0
    assert set(totals.sites) == set(exact.requests) == {"a.test", "b.test"}
    for site, got in totals.sites.items():
        assert got["requests"] == exact.requests[site]
        assert {k: v for k, v in got["status"].items() if v} == dict(exact.status[site])
        assert {k: v for k, v in got["cache"].items() if v} == dict(exact.cache[site])
        assert got["bytes_sent"] == exact.bytes_sent[site]
        assert got["get_2xx"] == exact.get_2xx[site]
        hits = sum(got["cache"][name] for name in HIT_STATUSES)
        exact_hits = sum(exact.cache[site][name] for name in HIT_STATUSES)
        assert hits / sum(got["cache"].values()) == exact_hits / sum(exact.cache[site].values())
        for name, values in (
            ("request_time", exact.request_times[site]),
            ("upstream_time", exact.upstream_times[site]),
        ):
            sketch = totals.sketches[(site, name)]
            assert sketch.count == len(values)
            for q in QUANTILES:
                want, got_q = exact_quantile(values, q), sketch.quantile(q)
                assert want is not None and got_q is not None
                assert abs(got_q - want) <= ALPHA * want + 1e-12, (site, name, q, got_q, want)
    for (addr, kind), count in totals.upstreams.items():
        wanted = exact.attempts[addr] if kind == "attempts" else exact.attempt_errors[addr]
        assert count == wanted, (addr, kind)
    assert sum(c for (_, k), c in totals.upstreams.items() if k == "errors") > 0


@pytest.mark.parametrize("fmt", ["quoted", "jsonl"])
def test_counts_hit_ratio_and_percentiles_equal_an_exact_reading_of_the_log(
    nginx_factory: Callable[..., NginxInstance],
    tmp_path: Path,
    app: UpstreamApp,
    cache_dir: Path,
    fmt: str,
) -> None:
    instance, log_path, skip = start_nginx(nginx_factory, tmp_path, app, fmt, cache_dir)
    collector = AccessLogCollector()
    collector.use_config(dump_of(instance))
    totals = Totals()
    totals.add(collector.collect())  # opens the log at its (empty) end
    plan = request_plan(1200)
    collect_during(collector, lambda: run_load(instance.base_url, plan), totals)
    exact, lines = (exact_from_quoted if fmt == "quoted" else exact_from_json)(log_path, skip=skip)
    assert lines == len(plan)
    assert_matches(totals, exact, lines)
    # The demo of caching works: both hits and misses were logged.
    assert exact.cache["a.test"]["HIT"] > 0 and exact.cache["a.test"]["MISS"] > 0
    (report,) = totals.files
    assert report["path"] == str(log_path) and report["state"] == "ok"
    assert report["missing_fields"] == [] and report["site_field"] == "host"
    collector.close()


def reopen_logs(instance: NginxInstance) -> None:
    """What logrotate's postrotate does: USR1 to the master, which reopens its log files."""
    os.kill(int(instance.pid_file.read_text()), signal.SIGUSR1)


@pytest.mark.parametrize("how", ["rename", "copytruncate"])
def test_rotation_in_the_middle_of_traffic_loses_and_double_counts_no_line(
    nginx_factory: Callable[..., NginxInstance],
    tmp_path: Path,
    app: UpstreamApp,
    cache_dir: Path,
    how: str,
) -> None:
    instance, log_path, skip = start_nginx(nginx_factory, tmp_path, app, "quoted", cache_dir)
    rotated = log_path.with_name("test.log.1")
    collector = AccessLogCollector(rotate_wait_s=0.5)
    collector.use_config(dump_of(instance))
    totals = Totals()
    totals.add(collector.collect())
    plan = request_plan(1500)

    def load_with_rotation() -> None:
        run_load(instance.base_url, plan[:700])
        rotator = threading.Thread(target=rotate)
        rotator.start()
        run_load(instance.base_url, plan[700:])
        rotator.join()

    def rotate() -> None:
        time.sleep(0.05)
        if how == "rename":
            log_path.rename(rotated)
            time.sleep(0.2)  # nginx keeps writing to the renamed file until it reopens
            reopen_logs(instance)
        else:
            shutil.copyfile(log_path, rotated)
            with log_path.open("r+b") as handle:
                handle.truncate(0)

    collect_during(collector, load_with_rotation, totals)
    time.sleep(0.6)
    totals.add(collector.collect())
    exact, lines = exact_from_quoted(rotated, log_path, skip=skip)
    # copytruncate loses what nginx wrote between the copy and the truncate: the lines on
    # disk are the truth, and every one of them is counted exactly once.
    assert lines <= len(plan) if how == "copytruncate" else lines == len(plan)
    assert lines > 700
    assert_matches(totals, exact, lines)
    collector.close()


def test_a_restart_mid_file_neither_rereads_nor_skips(
    nginx_factory: Callable[..., NginxInstance],
    tmp_path: Path,
    app: UpstreamApp,
    cache_dir: Path,
) -> None:
    instance, log_path, skip = start_nginx(nginx_factory, tmp_path, app, "quoted", cache_dir)
    dump = dump_of(instance)
    first = AccessLogCollector()
    first.use_config(dump)
    totals = Totals()
    totals.add(first.collect())
    plan = request_plan(900)
    run_load(instance.base_url, plan[:400])
    totals.add(first.collect())
    saved = first.positions()
    first.close()
    # Lines written while no agent runs are read by the next one.
    run_load(instance.base_url, plan[400:600])
    second = AccessLogCollector()
    second.restore(saved)
    second.use_config(dump)
    collect_during(second, lambda: run_load(instance.base_url, plan[600:]), totals)
    exact, lines = exact_from_quoted(log_path, skip=skip)
    assert lines == len(plan)
    assert_matches(totals, exact, lines)
    second.close()


def test_lines_in_another_format_are_skipped_counted_and_shown_redacted(
    nginx_factory: Callable[..., NginxInstance],
    tmp_path: Path,
    app: UpstreamApp,
    cache_dir: Path,
) -> None:
    instance, log_path, _ = start_nginx(nginx_factory, tmp_path, app, "quoted", cache_dir)
    collector = AccessLogCollector()
    collector.use_config(dump_of(instance))
    collector.collect()
    run_load(instance.base_url, request_plan(30))
    with log_path.open("ab") as handle:
        handle.write(
            b'10.1.2.3 - - [25/Nov/2026:10:00:00 +0000] "GET /login?token=s3cr3t HTTP/1.1" '
            b'200 12 "-" "curl" session=AbCdEf0123456789AbCdEf0123\n'
        )
    run_load(instance.base_url, request_plan(20))
    interval = collector.collect()
    assert interval is not None
    (report,) = interval["files"]
    assert (report["lines"], report["unparsed"]) == (51, 1)
    sample = report["unparsed_sample"]
    assert "10.1.2.3" not in sample and "s3cr3t" not in sample and "AbCdEf0123456789" not in sample
    assert sample.startswith("<ip> - - [25/Nov/2026") and report["unparsed_format"] == "quoted"
    assert sum(site["requests"] for site in interval["sites"]) == 50
    collector.close()
