"""A paced fleet of agents: wrk with bench/lua/fleet_push.lua, one connection per thread."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness.samples import push_body, templated_sample_text
from harness.wrk_load import run_wrk

LUA_SCRIPT = Path(__file__).resolve().parent.parent / "lua" / "fleet_push.lua"
# The agent's defaults (agent/nginx_fleet_agent/defaults.py): full-jitter backoff from 1 s to 300 s.
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 300.0
# An agent's spool holds far more; a push carries at most this many of its samples.
MAX_SAMPLES_PER_PUSH = 100


@dataclass(frozen=True)
class FleetLoadResult:
    """What the paced fleet sent and what the API answered, as counted per host by the script."""

    duration_s: float
    sent: int
    responses: int
    ok: int
    accepted: int
    duplicates: int
    rejected: int
    samples_created: int
    samples_pending: int
    failed: int
    no_reply: int
    retries: int
    in_flight: int
    statuses: dict[str, int]
    socket_errors: dict[str, int]
    latency_p50_s: float
    latency_p95_s: float
    latency_p99_s: float
    latency_max_s: float
    lag_bounds_ms: list[int]
    lag_buckets: list[int]
    max_lag_s: float
    first_failure: str
    generator_cpu_s: float

    @property
    def ok_per_s(self) -> float:
        """2xx replies per second."""
        return self.ok / self.duration_s

    @property
    def sent_per_s(self) -> float:
        """Pushes sent per second (first tries and retries)."""
        return self.sent / self.duration_s

    def late_share(self, bound_ms: int) -> float:
        """Share of pushes that left more than `bound_ms` after their due time."""
        index = self.lag_bounds_ms.index(bound_ms)
        late = sum(self.lag_buckets[index + 1 :])
        return late / max(1, sum(self.lag_buckets))


def write_templates(body_path: Path, sample_path: Path) -> None:
    """The push body (with @SAMPLES@) and one sample (with @SEQ@ ... placeholders) for the script.

    The sample is the one bench/ingest.py sends (SampleFactory: stub_status, /proc figures, TCP
    states, netstat, the nginx processes); the body carries config_hash as the agent always does."""
    sample_text = templated_sample_text()
    body = push_body(agent_id="@AGENT_ID@", hostname="@HOSTNAME@", samples=[])
    body_text = json.dumps(body, separators=(",", ":")).replace(
        '"samples":[]', '"samples":[@SAMPLES@]'
    )
    body_path.write_text(body_text)
    sample_path.write_text(sample_text)


def run_fleet_load(
    *,
    base_url: str,
    hosts_file: Path,
    body_template: Path,
    sample_template: Path,
    results_file: Path,
    duration_s: int,
    connections: int,
    interval_s: float,
    jitter_s: float,
    seed: int,
) -> FleetLoadResult:
    """Run the fleet for `duration_s` on `connections` connections (one wrk thread each)."""
    if not base_url.startswith("http://127."):
        raise ValueError(f"load goes to loopback only, got {base_url}")
    results_file.unlink(missing_ok=True)
    argv = [
        "wrk",
        f"--threads={connections}",
        f"--connections={connections}",
        f"--duration={duration_s}s",
        # wrk counts a connection as timed out while it waits for its next due time too, so
        # the limit must exceed the longest wait (one interval).
        f"--timeout={max(30, int(interval_s * 3))}s",
        f"--script={LUA_SCRIPT}",
        base_url,
        "--",
        str(hosts_file),
        str(body_template),
        str(sample_template),
        str(results_file),
        str(connections),
        str(interval_s),
        str(jitter_s),
        str(seed),
        str(BACKOFF_BASE_S),
        str(BACKOFF_CAP_S),
        str(MAX_SAMPLES_PER_PUSH),
    ]
    return parse_results(*run_wrk(argv, results_file))


def parse_results(raw: dict[str, object], generator_cpu_s: float) -> FleetLoadResult:
    """The script's JSON summed over threads."""
    threads = raw["threads"]
    latency = raw["latency_us"]
    errors = raw["errors"]
    bounds = raw["lag_bounds_ms"]
    duration_us = raw["duration_us"]
    assert isinstance(threads, list) and isinstance(latency, dict) and isinstance(errors, dict)
    assert isinstance(bounds, list) and isinstance(duration_us, int)
    statuses: Counter[str] = Counter()
    for thread in threads:
        statuses.update(thread["statuses"])
    buckets = [sum(t["lag_buckets"][i] for t in threads) for i in range(len(bounds) + 1)]
    failures = [t["first_failure"] for t in threads if t["first_failure"]]

    def total(key: str) -> int:
        return sum(int(t[key]) for t in threads)

    return FleetLoadResult(
        duration_s=duration_us / 1e6,
        sent=total("sent"),
        responses=total("responses"),
        ok=total("ok"),
        accepted=total("accepted"),
        duplicates=total("duplicates"),
        rejected=total("rejected"),
        samples_created=total("samples_created"),
        samples_pending=total("samples_pending"),
        failed=total("failed"),
        no_reply=total("no_reply"),
        retries=total("retries"),
        in_flight=total("in_flight"),
        statuses=dict(statuses),
        socket_errors={k: int(v) for k, v in errors.items() if k != "status"},
        latency_p50_s=latency["p50"] / 1e6,
        latency_p95_s=latency["p95"] / 1e6,
        latency_p99_s=latency["p99"] / 1e6,
        latency_max_s=latency["max"] / 1e6,
        lag_bounds_ms=[int(b) for b in bounds],
        lag_buckets=buckets,
        max_lag_s=max(float(t["max_lag_ms"]) for t in threads) / 1000,
        first_failure=failures[0] if failures else "",
        generator_cpu_s=generator_cpu_s,
    )
