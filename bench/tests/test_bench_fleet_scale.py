"""The fleet-scale benchmark's parts: the paced fleet script against the loopback sink (cadence,
seq order, retries of refused pushes), its stored-sample check, the compose services it runs."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import fleet_scale
from harness.api_probes import describe_body
from harness.fleet_load import FleetLoadResult, run_fleet_load, write_templates
from harness.net import free_port
from harness.production_stack import compose_celery_services, local_argv
from harness.sink import SINK_HOST_TOKEN, SinkRecord, running_sink
from harness.wrk_load import HostCredentials, write_hosts_file

HOSTS = 12


def _run_fleet(
    tmp_path: Path, *, fail_every: int, duration_s: int
) -> tuple[FleetLoadResult, SinkRecord]:
    hosts = [
        HostCredentials(i, f"agent-{i}", f"web-{i}", SINK_HOST_TOKEN, first_seq=2)
        for i in range(HOSTS)
    ]
    write_hosts_file(tmp_path / "hosts.tsv", hosts)
    write_templates(tmp_path / "body.json", tmp_path / "sample.json")
    port = free_port()
    with running_sink(port, push_interval_s=1, fail_every=fail_every) as sink:
        result = run_fleet_load(
            base_url=f"http://127.0.0.1:{port}",
            hosts_file=tmp_path / "hosts.tsv",
            body_template=tmp_path / "body.json",
            sample_template=tmp_path / "sample.json",
            results_file=tmp_path / "out.json",
            duration_s=duration_s,
            connections=3,
            interval_s=1.0,
            jitter_s=0.1,
            seed=3,
        )
    return result, sink


def test_each_host_pushes_one_new_sample_per_interval_in_seq_order(tmp_path: Path) -> None:
    result, sink = _run_fleet(tmp_path, fail_every=0, duration_s=3)
    # 12 hosts at 1 s for 3 s: about 36 pushes, none early and none piled up.
    assert 24 <= result.ok <= 48, result
    assert result.accepted == result.ok == len(sink.pushes) - result.in_flight
    assert result.failed == result.retries == result.duplicates == 0
    assert result.late_share(250) == 0.0
    seqs: dict[str, list[int]] = defaultdict(list)
    for push in sink.pushes:
        (sample,) = push["samples"]
        seqs[push["agent_id"]].append(sample["seq"])
        assert sample["stub_status"]["requests"] == sample["seq"] * 4100
        assert push["config_hash"]
    assert len(seqs) == HOSTS
    for numbers in seqs.values():
        assert numbers == list(range(2, 2 + len(numbers)))


def test_a_refused_push_is_retried_with_its_samples_until_acknowledged(tmp_path: Path) -> None:
    result, sink = _run_fleet(tmp_path, fail_every=4, duration_s=4)
    assert result.failed == sink.failed_pushes > 0
    assert result.statuses.get("503") == result.failed
    assert result.retries >= result.failed - result.samples_pending
    stored: dict[str, list[int]] = defaultdict(list)
    for push in sink.pushes:
        stored[push["agent_id"]].extend(sample["seq"] for sample in push["samples"])
    # Every sample made is stored once, in order, or still waiting in its host's spool.
    assert sum(len(seqs) for seqs in stored.values()) == result.accepted
    assert result.accepted + result.samples_pending == result.samples_created
    for seqs in stored.values():
        assert seqs == list(range(2, 2 + len(seqs)))


def _load(**changes: Any) -> FleetLoadResult:
    base = FleetLoadResult(
        duration_s=10.0, sent=100, responses=100, ok=100, accepted=100, duplicates=0,
        rejected=0, samples_created=100, samples_pending=0, failed=0, no_reply=0, retries=0,
        in_flight=0, statuses={"200": 100}, socket_errors={}, latency_p50_s=0.01,
        latency_p95_s=0.02, latency_p99_s=0.03, latency_max_s=0.04,
        lag_bounds_ms=[10, 50, 100, 250, 500, 1000, 2000, 5000],
        lag_buckets=[90, 5, 5, 0, 0, 0, 0, 0, 0], max_lag_s=0.09, first_failure="",
        generator_cpu_s=0.1,
    )  # fmt: skip
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize(
    ("stored", "changes", "ok"),
    [
        (100, {}, True),
        (99, {}, False),  # an acknowledged sample is missing
        (101, {}, False),  # a row nobody acknowledged
        (101, {"samples_pending": 1, "in_flight": 1}, True),  # cut off at the deadline
        (100, {"accepted": 99, "duplicates": 1}, True),  # stored, reply lost, acked on retry
        (100, {"rejected": 1}, False),
    ],
)
def test_stored_must_equal_acknowledged(stored: int, changes: dict[str, int], ok: bool) -> None:
    run = fleet_scale.Run(
        options=fleet_scale.parse_options(["--quick"]), setup={}, load=_load(**changes),
        stored=stored, probes=[], probe_errors={}, missed_probe_slots=0, streams=[], cpu_s={},
        machine_cpu_s=1.0, window_s=10.0, db_growth_bytes=0, samples_table_bytes=0,
        samples_rows_total=0, slices=[], queue_max={}, queue_end={},
    )  # fmt: skip
    assert fleet_scale.stored_matches(run) is ok


def test_late_share_counts_pushes_above_the_bound() -> None:
    assert _load().late_share(50) == pytest.approx(0.05)
    assert _load().late_share(100) == 0.0


def test_fleet_reply_shapes_are_told_apart() -> None:
    assert describe_body(b'[{"id": 1}]') == ("list", None)
    assert describe_body(b'{"items": [{"id": 1}, {"id": 2}], "total": 9}') == ("page", 2)
    assert describe_body(b'{"detail": "x"}') == ("object", None)


def test_the_celery_services_are_those_of_docker_compose(tmp_path: Path) -> None:
    services = compose_celery_services()
    assert [s.is_beat for s in services][-1] is True
    assert any(not s.is_beat for s in services)
    beat = services[-1]
    argv = local_argv(beat, data_dir=tmp_path)
    assert argv[0].endswith("/celery")
    if "--schedule" in argv:
        assert argv[argv.index("--schedule") + 1].startswith(str(tmp_path))


def test_options_refuse_fewer_hosts_than_connections() -> None:
    with pytest.raises(SystemExit):
        fleet_scale.parse_options(["--hosts", "10", "--connections", "20"])
