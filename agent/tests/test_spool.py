"""The on-disk spool: bounds, order, persistence of samples and of `seq`."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest
from nginx_fleet_agent.spool import Spool, peek_next_seq


def test_order_and_seq_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "spool.sqlite3"
    spool = Spool(path)
    assert [spool.append({"n": n}) for n in range(3)] == [1, 2, 3]
    spool.close()
    reopened = Spool(path)
    assert [(s["seq"], s["n"]) for s in reopened.oldest(10)] == [(1, 0), (2, 1), (3, 2)]
    assert reopened.append({"n": 3}) == 4
    reopened.remove_through(2)
    assert [s["seq"] for s in reopened.oldest(10)] == [3, 4]
    reopened.close()
    assert peek_next_seq(path) == 5
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_seq_never_repeats_after_the_spool_empties(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool.sqlite3")
    spool.append({})
    spool.remove_through(1)
    assert len(spool) == 0
    assert spool.append({}) == 2


def test_count_bound_drops_oldest_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool = Spool(tmp_path / "spool.sqlite3", max_samples=3)
    with caplog.at_level(logging.WARNING):
        for n in range(5):
            spool.append({"n": n})
    assert [s["n"] for s in spool.oldest(10)] == [2, 3, 4]
    assert "dropped the 1 oldest" in caplog.text


def test_dropped_samples_become_one_growing_gap_record(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool.sqlite3", max_samples=3)
    for n in range(6):
        spool.append({"ts": f"2026-11-23T08:00:0{n}Z"})
    assert spool.gaps(10) == [
        {
            "from_seq": 1,
            "to_seq": 3,
            "from_ts": "2026-11-23T08:00:00Z",
            "to_ts": "2026-11-23T08:00:02Z",
            "reason": "spool_overflow",
        }
    ]
    sent = spool.gaps(10)
    spool.append({"ts": "2026-11-23T08:00:06Z"})
    # The record grew after it was read: confirming the old extent must not forget seq 4.
    spool.remove_gaps(sent)
    assert [(g["from_seq"], g["to_seq"], g["to_ts"]) for g in spool.gaps(10)] == [
        (1, 4, "2026-11-23T08:00:03Z")
    ]
    spool.remove_gaps(spool.gaps(10))
    assert spool.gaps(10) == []
    # Samples delivered in between: the next loss is a record of its own.
    spool.remove_through(7)
    for n in range(5):
        spool.append({"ts": f"2026-11-23T08:01:0{n}Z"})
    assert [(g["from_seq"], g["to_seq"]) for g in spool.gaps(10)] == [(8, 9)]


def test_byte_bound_drops_oldest(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool.sqlite3", max_samples=1000, max_bytes=250)
    for n in range(10):
        spool.append({"n": n, "pad": "x" * 50})
    assert spool.size_bytes() <= 250
    kept = [s["n"] for s in spool.oldest(100)]
    assert kept == list(range(10 - len(kept), 10))
    assert 2 <= len(kept) < 10


def test_batches_are_limited_and_oldest_first(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool.sqlite3")
    for n in range(7):
        spool.append({"n": n})
    assert [s["seq"] for s in spool.oldest(3)] == [1, 2, 3]


def test_meta_values_persist(tmp_path: Path) -> None:
    path = tmp_path / "spool.sqlite3"
    spool = Spool(path)
    spool.set_meta("acked_config_hash", "abc")
    spool.close()
    spool = Spool(path)
    assert spool.get_meta("acked_config_hash") == "abc"
    spool.set_meta("acked_config_hash", None)
    assert spool.get_meta("acked_config_hash") is None


def test_peek_without_a_spool_does_not_create_one(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "spool.sqlite3"
    assert peek_next_seq(path) == 1
    assert not path.parent.exists()
