"""Packed sketches: the stored form gives back the counts it was given, merges stay exact."""

from __future__ import annotations

import random

import pytest
from app.access_log.aggregate import SketchCounts
from app.access_log.packed import pack, pack_protocol, unpack, unpack_protocol
from nginx_fleet_analyzer.latency_sketch import ALPHA, MAX_INDEX, Sketch, exact_quantile

from tests.access_log.factories import latencies, sketch_json


@pytest.mark.parametrize(
    ("zero", "bins"),
    [
        (0, {}),
        (7, {}),
        (3, {-345: 12, -300: 400}),
        # Dense: every bin of a span filled.
        (0, {i: i + 301 for i in range(-300, -100)}),
        # Sparse with gaps wider than a byte, indexes at both protocol bounds.
        (1, {-MAX_INDEX: 1, 0: 2, MAX_INDEX: 3}),
        # Sums of rollups pass 32 bits.
        (2**40, {-1: 2**33, 5: 1}),
    ],
)
@pytest.mark.parametrize("deflate", [False, True])
def test_packing_gives_back_the_counts(zero: int, bins: dict[int, int], deflate: bool) -> None:
    assert unpack(pack(zero, bins, deflate=deflate)) == (zero, bins)


def test_rollup_sketches_are_deflated_when_that_is_shorter() -> None:
    # A minute's merged sketch: many small, alike counts.
    counts = SketchCounts()
    for part in range(6):
        counts.add(pack_protocol(sketch_json(latencies(60, seed=part))))
    plain = pack(counts.zero, counts.bins)
    stored = counts.packed()
    assert stored is not None and stored[0] & 0x40
    assert len(stored) < 0.7 * len(plain)
    assert unpack(stored) == unpack(plain)
    # Too short to gain: stored as is.
    assert pack(1, {5: 1}, deflate=True) == pack(1, {5: 1})


def test_empty_bins_are_left_out_and_negative_counts_refused() -> None:
    assert unpack(pack(0, {4: 0, 5: 1})) == (0, {5: 1})
    with pytest.raises(ValueError, match="negative"):
        pack(0, {1: -1})


def test_the_shorter_layout_is_chosen_and_far_shorter_than_json() -> None:
    values = latencies(60, seed=3)
    data = sketch_json(values)
    packed = pack_protocol(data)
    assert unpack_protocol(packed) == {
        "zero": data["zero"],
        "bins": {key: data["bins"][key] for key in sorted(data["bins"], key=int)},
    }
    json_size = len(str(data).replace(" ", ""))
    # ~2 bytes per bin (a gap and a count) against ~10 in JSON.
    assert len(packed) * 3 < json_size
    dense = pack(0, {i: 1 for i in range(100)})
    # A full span: one byte per bin, no gaps.
    assert len(dense) < 110


def test_merged_packed_sketches_give_the_quantiles_of_all_values_within_alpha() -> None:
    rng = random.Random(11)
    every: list[float] = []
    total = SketchCounts()
    for part in range(50):
        values = latencies(rng.randint(1, 200), seed=part, median=rng.choice([0.01, 0.2, 2.0]))
        every += values
        total.add(pack_protocol(sketch_json(values)))
    # Summed counts repacked (as a rollup stores them) and read back lose nothing.
    again = SketchCounts()
    again.add(total.packed() or b"")
    assert (again.zero, again.bins) == (total.zero, {i: c for i, c in total.bins.items() if c})
    sketch = again.sketch()
    assert sketch.count == len(every)
    for q in (0.5, 0.9, 0.95, 0.99):
        exact = exact_quantile(every, q)
        assert exact is not None
        value = sketch.quantile(q)
        assert value is not None
        assert value == pytest.approx(exact, rel=ALPHA, abs=1e-12)
    # The same counts as one sketch of every value: merging packed sketches is exact.
    direct = Sketch()
    for value in every:
        direct.add(value)
    assert (sketch.zero, sketch.bins) == (direct.zero, direct.bins)
