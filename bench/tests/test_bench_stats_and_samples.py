"""Percentiles and the generated push bodies."""

from __future__ import annotations

import itertools
import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from harness.samples import (
    TEMPLATE_NUMBERS,
    TEMPLATE_STRINGS,
    SampleFactory,
    lua_push_template,
    push_body,
)
from harness.stats import Timings, percentile


def test_percentile_interpolates_between_ranks() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0) == 1.0
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 95) == pytest.approx(95.05)
    assert percentile(values, 100) == 100.0
    assert percentile([3.0], 99) == 3.0


def test_percentile_refuses_empty_input_and_bad_rank() -> None:
    with pytest.raises(ValueError, match="empty"):
        percentile([], 50)
    with pytest.raises(ValueError, match=r"0\.\.100"):
        percentile([1.0], 101)


def test_timings_summarise_in_order() -> None:
    timings = Timings.of([0.004, 0.001, 0.002, 0.003, 0.010])
    assert timings.count == 5
    assert timings.median_s == 0.003
    assert timings.median_s <= timings.p95_s <= timings.p99_s <= timings.max_s == 0.010


def test_a_day_of_samples_is_8640_rows_ten_seconds_apart_with_growing_counters() -> None:
    end = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
    day = SampleFactory(rng=random.Random(3)).day(end=end)
    assert len(day) == 8640
    assert [s["seq"] for s in day] == list(range(1, 8641))
    assert day[-1]["ts"] == "2026-11-21T10:00:00Z"
    assert day[0]["ts"] == (end - timedelta(seconds=86390)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for earlier, later in itertools.pairwise(day):
        assert later["stub_status"]["requests"] > earlier["stub_status"]["requests"]
        assert later["stub_status"]["accepts"] > earlier["stub_status"]["accepts"]
    for sample in day[:50]:
        page = sample["stub_status"]
        assert page["active"] == page["reading"] + page["writing"] + page["waiting"]


def test_a_full_push_of_500_samples_stays_under_the_ingest_limit() -> None:
    samples = SampleFactory(rng=random.Random(1)).day(end=datetime.now(UTC))[:500]
    body = push_body(agent_id="a", hostname="h", samples=samples, with_config=True)
    assert len(json.dumps(body)) < 2 * 1024 * 1024
    assert body["config"]["dump"].startswith("# configuration file /etc/nginx/nginx.conf:")


def test_lua_template_becomes_a_valid_push_once_filled() -> None:
    template = lua_push_template()
    values = {name: "x" for name in TEMPLATE_STRINGS} | {name: "7" for name in TEMPLATE_NUMBERS}
    filled = template
    for name, value in values.items():
        filled = filled.replace(f"@{name}@", value)
    body = json.loads(filled)
    (sample,) = body["samples"]
    assert sample["seq"] == 7
    assert sample["stub_status"]["requests"] == 7
    assert body["agent_id"] == "x"
    assert "@" not in filled
