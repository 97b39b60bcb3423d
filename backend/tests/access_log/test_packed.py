"""Packed sketches: the stored form gives back the counts and level it was given, merges stay
exact."""

from __future__ import annotations

import random

import pytest
from app.access_log.aggregate import ROLLUP_LEVEL, SketchCounts
from app.access_log.packed import level_of, pack, pack_protocol, unpack, unpack_protocol
from nginx_fleet_analyzer.latency_sketch import (
    ALPHA,
    MAX_INDEX,
    Sketch,
    coarser_bins,
    exact_quantile,
)

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
        # An hour's counts: hundreds, rising and falling by little (stored as differences).
        (9, {i: 1200 - 10 * abs(i) for i in range(-119, 120)}),
        # Differences at the bounds of a signed byte.
        (0, {0: 127, 1: 254, 2: 381, 3: 253}),
    ],
)
@pytest.mark.parametrize("deflate", [False, True])
def test_packing_gives_back_the_counts(zero: int, bins: dict[int, int], deflate: bool) -> None:
    assert unpack(pack(zero, bins, deflate=deflate)) == (zero, bins)


def test_rollup_sketches_are_stored_coarser_and_deflated_when_that_is_shorter() -> None:
    # A minute's merged sketch: many small, alike counts.
    counts = SketchCounts()
    for part in range(6):
        counts.add(pack_protocol(sketch_json(latencies(60, seed=part))))
    coarse = coarser_bins(counts.bins, ROLLUP_LEVEL)
    plain = pack(counts.zero, coarse, level=ROLLUP_LEVEL)
    stored = counts.packed()
    assert stored is not None and stored[0] & 0x40
    assert level_of(stored) == ROLLUP_LEVEL
    assert len(stored) < 0.7 * len(plain)
    assert unpack(stored) == unpack(plain) == (counts.zero, coarse)
    # Too short to gain: stored as is.
    assert pack(1, {5: 1}, deflate=True) == pack(1, {5: 1})


@pytest.mark.parametrize("deflate", [False, True])
def test_the_level_is_flagged_and_rows_stored_before_it_read_as_protocol_bins(
    deflate: bool,
) -> None:
    bins = {-301: 4, -300: 1, 7: 2}
    before = pack(3, bins, deflate=deflate)
    assert level_of(before) == 0
    assert unpack_protocol(before) == {"zero": 3, "bins": {"-301": 4, "-300": 1, "7": 2}}
    coarse = pack(3, coarser_bins(bins, 1), deflate=deflate, level=1)
    assert level_of(coarse) == 1
    assert unpack_protocol(coarse) == {"zero": 3, "bins": {"-150": 5, "4": 2}, "level": 1}
    # The protocol form with its level packs back to the same bytes (the ORM's round trip).
    assert pack_protocol(unpack_protocol(coarse), deflate=deflate) == coarse
    with pytest.raises(ValueError, match="level 2"):
        pack(0, {1: 1}, level=2)


def test_dense_counts_are_stored_as_differences_only_when_these_are_narrower() -> None:
    def layout(bins: dict[int, int]) -> int:
        return pack(0, bins)[0] & 3

    hour = {i: 1200 - 10 * abs(i) for i in range(-119, 120)}
    assert (layout(hour), layout({0: 127, 1: 254, 2: 381, 3: 253})) == (3, 3)
    # 2 bytes a bin as counts, 1 as differences.
    assert len(pack(0, hour)) < 239 + 10
    # A difference of 128 needs 2 bytes, as the counts do; counts of a byte stay counts.
    assert (layout({0: 128, 1: 384}), layout({0: 1, 1: 200, 2: 3})) == (1, 1)


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


def test_summed_raw_sketches_give_the_quantiles_of_all_values_within_alpha() -> None:
    rng = random.Random(11)
    every: list[float] = []
    total = SketchCounts()
    for part in range(50):
        values = latencies(rng.randint(1, 200), seed=part, median=rng.choice([0.01, 0.2, 2.0]))
        every += values
        total.add(pack_protocol(sketch_json(values)))
    # Raw rows' sketches (protocol bins) add up to the protocol's accuracy.
    sketch = total.sketch()
    assert (sketch.level, sketch.count) == (0, len(every))
    for q in (0.5, 0.9, 0.95, 0.99):
        exact = exact_quantile(every, q)
        assert exact is not None
        value = sketch.quantile(q)
        assert value is not None
        assert value == pytest.approx(exact, rel=ALPHA, abs=1e-12)
    # The same counts as one sketch of every value: merging packed sketches is exact, and so is
    # the stored sum at the rollups' level.
    direct = Sketch()
    for value in every:
        direct.add(value)
    assert (sketch.zero, sketch.bins) == (direct.zero, direct.bins)
    again = SketchCounts()
    again.add(total.packed() or b"")
    direct.coarsen(ROLLUP_LEVEL)
    assert (again.level, again.zero, again.bins) == (ROLLUP_LEVEL, direct.zero, direct.bins)
