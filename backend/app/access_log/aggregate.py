"""Summing stored access-log rows: counters added, sketches merged, top paths combined.

One accumulator serves the rollups (raw rows into minutes, minutes into hours) and the queries
(rows of any table into points and totals), so every figure is combined the same way. A counter
stays None while every row it saw lacked it: a figure the log format cannot give is absent,
never zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson
from nginx_fleet_analyzer.latency_sketch import Sketch, coarser_bins
from sqlalchemy import JSON, LargeBinary, Table, Text, cast, type_coerce
from sqlalchemy.sql.elements import ColumnElement

from app.access_log.fields import (
    SITE_COUNTERS,
    SITE_SKETCHES,
    UPSTREAM_COUNTERS,
    UPSTREAM_SKETCHES,
)
from app.access_log.packed import PackedSketch, add_into, level_of, pack, unpack

# Paths a bucket keeps per site: the most frequent and the slowest (by mean time) this many.
TOP_PATHS_KEPT = 20
# The level of the sketches the rollups store: pairs of the protocol's bins, 2% accuracy
# (latency_sketch.level_alpha(1) = 1.9998%) for about half the bins of 1%; raw rows keep the
# protocol's bins.
ROLLUP_LEVEL = 1


def decoded(value: Any) -> Any:
    """A JSON column's value, read as text (see stored_columns) or already decoded."""
    return orjson.loads(value) if isinstance(value, str) else value


def stored_columns(table: Table) -> list[ColumnElement[Any]]:
    """Every column of a log table, the JSON ones as their text (orjson reads it several times
    faster than the driver's json module) and the sketches as their packed bytes (decoding
    them straight into counts spares building the protocol form of every stored sketch)."""
    columns: list[ColumnElement[Any]] = []
    for column in table.c:
        if isinstance(column.type, JSON):
            columns.append(cast(column, Text).label(column.name))
        elif isinstance(column.type, PackedSketch):
            columns.append(type_coerce(column, LargeBinary).label(column.name))
        else:
            columns.append(column)
    return columns


class SketchCounts:
    """A sketch's counts added up: zero values, and counts per bin index of `level`.

    Merging sketches is adding counts; adding them as stored spares building a Sketch for every
    row. Stored sketches differ in level (raw rows 0, rollups ROLLUP_LEVEL or, stored before
    it, 0): the sum takes the coarser level of what it was given, so counts are only ever added
    to the bin that holds their values. `sketch()` hands the sum to the analyzer's Sketch for
    quantiles."""

    __slots__ = ("bins", "level", "zero")

    def __init__(self) -> None:
        self.zero = 0
        self.bins: dict[int, int] = {}
        self.level = 0

    def add(self, data: bytes | memoryview | Mapping[str, Any]) -> None:
        """Add the counts of a stored sketch: packed bytes, or the protocol form."""
        if isinstance(data, Mapping):
            bins = {int(key): int(count) for key, count in data.get("bins", {}).items()}
            self._add(int(data.get("zero", 0)), bins, int(data.get("level", 0)))
            return
        packed = data if isinstance(data, bytes) else bytes(data)
        level = level_of(packed)
        if level > self.level:
            self._coarsen(level)
        if level == self.level:
            self.zero += add_into(packed, self.bins)
            return
        self._add(*unpack(packed), level)

    def merge(self, other: SketchCounts) -> None:
        """Add the counts of another sum."""
        self._add(other.zero, other.bins, other.level)

    def _coarsen(self, level: int) -> None:
        """Bring the sum's bins to a coarser level."""
        self.bins = coarser_bins(self.bins, level - self.level)
        self.level = level

    def _add(self, zero: int, bins: Mapping[int, int], level: int) -> None:
        """Add counts of bins of `level`, at the coarser level of theirs and the sum's."""
        if level > self.level:
            self._coarsen(level)
        elif level < self.level:
            bins = coarser_bins(bins, self.level - level)
        self.zero += zero
        own = self.bins
        for index, count in bins.items():
            own[index] = own.get(index, 0) + count

    def __bool__(self) -> bool:
        return bool(self.zero) or any(self.bins.values())

    def packed(self) -> bytes | None:
        """The form the rollups store the sum in: at ROLLUP_LEVEL (or coarser), deflated; None
        when it holds no value."""
        if not self:
            return None
        level = max(self.level, ROLLUP_LEVEL)
        return pack(
            self.zero, coarser_bins(self.bins, level - self.level), deflate=True, level=level
        )

    def sketch(self) -> Sketch:
        """The sum as the analyzer's Sketch."""
        return Sketch(self.zero, {i: c for i, c in self.bins.items() if c}, self.level)


class Totals:
    """Running sums of counters and of sketch counts over the rows added."""

    __slots__ = ("counters", "rows", "sketches")

    def __init__(self, counters: Sequence[str], sketches: Sequence[str]) -> None:
        self.counters: dict[str, int | None] = dict.fromkeys(counters)
        self.sketches: dict[str, SketchCounts] = {name: SketchCounts() for name in sketches}
        self.rows = 0

    def add(self, row: Mapping[Any, Any]) -> None:
        """Add one stored row (of a stats or a rollup table)."""
        self.rows += 1
        counters = self.counters
        for name, total in counters.items():
            value = row[name]
            if value is not None:
                counters[name] = value if total is None else total + value
        for name, counts in self.sketches.items():
            data = row[name]
            if data is not None:
                counts.add(data)

    def merge(self, other: Totals) -> None:
        """Add everything another accumulator of the same figures holds."""
        self.rows += other.rows
        for name, value in other.counters.items():
            if value is not None:
                total = self.counters[name]
                self.counters[name] = value if total is None else total + value
        for name, counts in other.sketches.items():
            self.sketches[name].merge(counts)

    def sketch(self, name: str) -> Sketch | None:
        """The named merged sketch, or None when no row carried a value in it."""
        counts = self.sketches[name]
        return counts.sketch() if counts else None

    def as_row(self) -> dict[str, Any]:
        """Counters and sketches in the stored form (sketches packed, None when empty)."""
        row: dict[str, Any] = dict(self.counters)
        for name, counts in self.sketches.items():
            row[name] = counts.packed()
        return row


def site_totals() -> Totals:
    """An accumulator of the figures of site rows."""
    return Totals(SITE_COUNTERS, SITE_SKETCHES)


def upstream_totals() -> Totals:
    """An accumulator of the figures of upstream rows."""
    return Totals(UPSTREAM_COUNTERS, UPSTREAM_SKETCHES)


class PathTotals:
    """Requests, summed time and longest time per (site, path)."""

    __slots__ = ("paths",)

    def __init__(self) -> None:
        self.paths: dict[tuple[str, str], list[float]] = {}

    def add(self, site: str, entries: Iterable[Sequence[Any]] | str) -> None:
        """Add stored [path, requests, time_sum, time_max] entries of one site."""
        for path, requests, time_sum, time_max in decoded(entries):
            held = self.paths.get((site, path))
            if held is None:
                self.paths[(site, path)] = [requests, time_sum, time_max]
            else:
                held[0] += requests
                held[1] += time_sum
                held[2] = max(held[2], time_max)

    def __bool__(self) -> bool:
        return bool(self.paths)

    def top(self, site: str | None = None, kept: int = TOP_PATHS_KEPT) -> list[list[Any]]:
        """The `kept` most frequent and `kept` slowest paths (of one site, or all), as stored
        entries [site, path, requests, time_sum, time_max], most frequent first.

        Summing the tops of intervals undercounts a path that was below a cut-off in some of
        them: the figures are the least a path had, exact for the paths always in the top."""
        items: list[list[Any]] = [
            [entry_site, path, *values]
            for (entry_site, path), values in self.paths.items()
            if site is None or entry_site == site
        ]
        frequent = sorted(items, key=lambda e: (-e[2], e[1]))[:kept]
        slowest = sorted(items, key=lambda e: (-(e[3] / e[2]) if e[2] else 0.0, e[1]))[:kept]
        chosen = {(e[0], e[1]): e for e in [*frequent, *slowest]}
        return sorted(chosen.values(), key=lambda e: (-e[2], e[0], e[1]))
