"""Latency sketches packed into bytes for storage, and the column type that stores them.

The protocol's JSON form spends ~10 bytes per bin ("-345": 12, quotes and all); packed, a bin
costs one to three bytes. Layout, little-endian:

    byte 0    layout (bits 0-1: 0 no bins, 1 dense, 2 sparse, 3 differences), count width
              (bits 2-3) and gap width (bits 4-5), each width code w meaning 2**w bytes; bit 6
              deflated, bit 7 the bins' level (0: the protocol's, 1: pairs of them collapsed)
    varint    zero count
    (with bins) zigzag varint of the first bin index, varint of the number of entries n
    dense     n counts of bins first, first+1, ..., first+n-1 (empty bins count 0)
    sparse    n gaps (index minus the previous one, the first one 0), then n counts
    differences  dense, but each count minus the one before (the first one minus 0), signed,
              in the count width

The encoder writes whichever of dense and sparse is shorter, dense as differences when these
fit a narrower integer than the counts: an hour's merged counts run into the hundreds and
change little from bin to bin (~270 bytes deflated as 2-byte counts, ~170 as 1-byte
differences). Counts, gaps and differences are fixed-width arrays so that struct reads them at
C speed: rollups decode every stored sketch. With `deflate` (the rollups: written once a
minute, kept for days) everything after byte 0 is raw-deflated when that is shorter, flagged by
bit 6: a merged sketch's counts are mostly small and alike, and deflate takes a minute's sketch
from ~140 bytes to ~80 for ~10 µs. Raw rows, written on the push path and kept for hours, are
not deflated.

Raw rows keep the protocol's bins (level 0: 1% accuracy). The rollups store their sums at level
1 (app.access_log.aggregate.ROLLUP_LEVEL: 2% accuracy, see latency_sketch), flagged by bit 7,
so that rollups stored at level 0 before it still read as what they are: a reader brings the
finer of two sketches to the coarser level before adding counts (aggregate.SketchCounts).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping
from itertools import accumulate, pairwise
from typing import Any

from sqlalchemy import LargeBinary
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

_EMPTY, _DENSE, _SPARSE, _DIFFERENCES = 0, 1, 2, 3
_DEFLATED = 0x40
# Byte 0 has one bit left for the level: the protocol's bins, or pairs of them.
_LEVEL_SHIFT, _LEVELS = 7, (0, 1)
# Raw deflate (no zlib header or checksum: the database keeps the bytes), fastest level: the
# higher ones gain a few bytes for twice the time.
_WBITS, _LEVEL = -15, 1
_FORMATS, _SIGNED_FORMATS = "BHIQ", "bhiq"
_LIMITS = (0xFF, 0xFFFF, 0xFFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF)


def _width(largest: int) -> int:
    """The width code of the narrowest unsigned integer holding largest."""
    for code, limit in enumerate(_LIMITS):
        if largest <= limit:
            return code
    raise ValueError(f"count {largest} exceeds 64 bits")


def _varint(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def pack(zero: int, bins: Mapping[int, int], *, deflate: bool = False, level: int = 0) -> bytes:
    """The packed form of a sketch whose bins are of `level` (empty bins are left out), its body
    deflated when asked and shorter."""
    pairs = sorted([(index, count) for index, count in bins.items() if count])
    packed = _pack_sorted(zero, pairs, level)
    if deflate and len(packed) > 16:
        compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS)
        body = compressor.compress(packed[1:]) + compressor.flush()
        if len(body) + 1 < len(packed):
            return bytes([packed[0] | _DEFLATED]) + body
    return packed


def _pack_sorted(zero: int, pairs: list[tuple[int, int]], level: int) -> bytes:
    """pack() of the bins as (index, count) in index order (empty ones are left out)."""
    if level not in _LEVELS:
        raise ValueError(f"sketch level {level} cannot be stored (only {_LEVELS})")
    level_bit = level << _LEVEL_SHIFT
    if zero < 0 or any(count <= 0 for _index, count in pairs):
        if zero < 0 or any(count < 0 for _index, count in pairs):
            raise ValueError("sketch counts must not be negative")
        pairs = [(index, count) for index, count in pairs if count]
    head = _varint(zero)
    if not pairs:
        return bytes([_EMPTY | level_bit]) + head
    indexes = [index for index, _count in pairs]
    counts = [count for _index, count in pairs]
    first, last = indexes[0], indexes[-1]
    count_code = _width(max(counts))
    count_size = 1 << count_code
    gaps = [0, *(b - a for a, b in pairwise(indexes))]
    gap_code = _width(max(gaps))
    span = last - first + 1
    head += _varint(first << 1 if first >= 0 else (-first << 1) - 1)
    if span * count_size <= len(pairs) * (count_size + (1 << gap_code)):
        layout, code, body = _dense(pairs, first, span, count_code)
        return bytes([layout | code << 2 | level_bit]) + head + _varint(span) + body
    n = len(pairs)
    body = struct.pack(f"<{n}{_FORMATS[gap_code]}", *gaps) + struct.pack(
        f"<{n}{_FORMATS[count_code]}", *counts
    )
    header = _SPARSE | count_code << 2 | gap_code << 4 | level_bit
    return bytes([header]) + head + _varint(n) + body


def _dense(
    pairs: list[tuple[int, int]], first: int, span: int, count_code: int
) -> tuple[int, int, bytes]:
    """(layout, width code, body) of the bins as a dense array: their counts, or the
    differences between them when those fit a narrower integer."""
    dense = [0] * span
    for index, count in pairs:
        dense[index - first] = count
    if count_code:
        differences = [dense[0], *(b - a for a, b in pairwise(dense))]
        # A signed integer holds x when the unsigned one of its width holds 2x+1 (x >= 0) or
        # -2x-1 (x < 0).
        largest = 2 * max(max(differences), -1 - min(differences)) + 1
        if largest <= _LIMITS[count_code - 1]:
            code = _width(largest)
            return _DIFFERENCES, code, struct.pack(f"<{span}{_SIGNED_FORMATS[code]}", *differences)
    return _DENSE, count_code, struct.pack(f"<{span}{_FORMATS[count_code]}", *dense)


def level_of(data: bytes) -> int:
    """The level of a packed sketch's bins."""
    return data[0] >> _LEVEL_SHIFT


def unpack(data: bytes) -> tuple[int, dict[int, int]]:
    """(zero, {bin index: count}) of a packed sketch, the bins of its level_of()."""
    bins: dict[int, int] = {}
    return add_into(data, bins), bins


def add_into(data: bytes, bins: dict[int, int]) -> int:
    """Add a packed sketch's bin counts into `bins` (of the same level); returns its zero
    count. (The rollups' inner loop: no intermediate dict per sketch.)"""
    header = data[0]
    if header & _DEFLATED:
        data = bytes([header]) + zlib.decompress(data[1:], _WBITS)
    layout, count_code, gap_code = header & 3, header >> 2 & 3, header >> 4 & 3
    zero, at = _read_varint(data, 1)
    if layout == _EMPTY:
        return zero
    encoded_first, at = _read_varint(data, at)
    first = encoded_first >> 1 if not encoded_first & 1 else -((encoded_first + 1) >> 1)
    n, at = _read_varint(data, at)
    count_format = f"<{n}{_FORMATS[count_code]}"
    get = bins.get
    if layout != _SPARSE:
        dense: Iterable[int] = (
            struct.unpack_from(count_format, data, at)
            if layout == _DENSE
            else accumulate(struct.unpack_from(f"<{n}{_SIGNED_FORMATS[count_code]}", data, at))
        )
        for index, count in enumerate(dense, first):
            if count:
                bins[index] = get(index, 0) + count
        return zero
    gap_format = f"<{n}{_FORMATS[gap_code]}"
    gaps = struct.unpack_from(gap_format, data, at)
    counts = struct.unpack_from(count_format, data, at + struct.calcsize(gap_format))
    index = first
    for gap, count in zip(gaps, counts, strict=True):
        index += gap
        bins[index] = get(index, 0) + count
    return zero


def pack_protocol(data: Mapping[str, Any], *, deflate: bool = False) -> bytes:
    """The packed form of a sketch in the protocol's form ({"zero": z, "bins": {"i": c}}, and
    "level" when coarsened: latency_sketch.Sketch.to_json)."""
    bins = data.get("bins") or {}
    zero = int(data.get("zero", 0))
    level = int(data.get("level", 0))
    if deflate:
        counts = {int(index): int(count) for index, count in bins.items()}
        return pack(zero, counts, deflate=True, level=level)
    # The push path (validated protocol bins): sorted once as integers, no intermediate dict.
    pairs = sorted(zip(map(int, bins), map(int, bins.values()), strict=True))
    return _pack_sorted(zero, pairs, level)


def unpack_protocol(data: bytes) -> dict[str, Any]:
    """A packed sketch in the protocol's form, bins in index order ("level" when not 0)."""
    zero, bins = unpack(data)
    unpacked = {"zero": zero, "bins": {str(index): bins[index] for index in sorted(bins)}}
    if level := level_of(data):
        unpacked["level"] = level
    return unpacked


class PackedSketch(TypeDecorator[dict[str, Any]]):
    """A sketch column: bytea (BLOB on SQLite) holding pack()'s bytes, read and written in the
    protocol's form. Hot paths select the bytes themselves (aggregate.stored_columns)."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> bytes | None:
        if value is None or isinstance(value, bytes):
            return value
        return pack_protocol(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> dict[str, Any] | None:
        return None if value is None else unpack_protocol(bytes(value))
