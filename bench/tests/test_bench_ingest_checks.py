"""The ingest benchmark's stored-sample check and its option parsing."""

from __future__ import annotations

import dataclasses

import pytest

import ingest
from harness.wrk_load import LoadResult

PUSH = LoadResult(
    mode="push",
    duration_s=5.0,
    sent=1004,
    responses=1000,
    ok=1000,
    accepted=1000,
    duplicates=0,
    statuses={"200": 1000},
    socket_errors={},
    latency_p50_s=0.01,
    latency_p90_s=0.02,
    latency_p99_s=0.03,
    latency_max_s=0.05,
    first_failure="",
    generator_cpu_s=0.2,
)


def test_stored_equal_to_2xx_or_plus_cut_off_requests_passes() -> None:
    assert ingest.stored_matches(PUSH, 1000)
    assert ingest.stored_matches(PUSH, 1004)


def test_lost_or_extra_samples_fail() -> None:
    assert not ingest.stored_matches(PUSH, 999)
    assert not ingest.stored_matches(PUSH, 1005)


def test_errors_duplicates_or_wrong_accept_counts_fail() -> None:
    assert not ingest.stored_matches(dataclasses.replace(PUSH, duplicates=1), 1000)
    assert not ingest.stored_matches(dataclasses.replace(PUSH, accepted=999), 1000)
    assert not ingest.stored_matches(dataclasses.replace(PUSH, responses=1001), 1000)


def test_quick_shortens_runs_and_bad_numbers_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert ingest.parse_options(["--quick"]).duration_s == 5
    assert ingest.parse_options([]).duration_s == 15
    with pytest.raises(SystemExit):
        ingest.parse_options(["--hosts", "0"])
    assert "--hosts must be >= 1" in capsys.readouterr().err
