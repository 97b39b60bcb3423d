"""Constrained input types shared by every API schema: only values the database can hold.

Each one turns what would fail deep in PostgreSQL or in Python's datetime arithmetic (a 500)
into a 422 naming the field: NUL in text, ids beyond the 32-bit id columns, timestamps whose
offset pushes them out of the years datetime can represent, JSON nested or sized without bound.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Path
from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field

# Primary keys are PostgreSQL `integer` columns.
INT4_MAX = 2**31 - 1
BIGINT_MAX = 2**63 - 1

# A day of room on each side of datetime's own limits, so that bucket edges, windows and
# offsets computed from an accepted value cannot overflow either.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)

MAX_JSON_DEPTH = 16
MAX_JSON_ITEMS = 10_000


def refuse_nul(value: str) -> str:
    """PostgreSQL text and jsonb cannot hold U+0000, so such a value is refused up front."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters (\\u0000)")
    return value


# Every free-text field of a request: a string without NUL. Compose with StringConstraints.
Text = Annotated[str, AfterValidator(refuse_nul)]


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


# Free text trimmed before its length is checked (StringConstraints' strip_whitespace trims
# after, so "   " would pass min_length=1 and be stored as "").
TrimmedText = Annotated[str, BeforeValidator(_strip), AfterValidator(refuse_nul)]

# A row id in a request body.
DbId = Annotated[int, Field(ge=1, le=INT4_MAX)]
# A row id in a URL path.
IdPath = Annotated[int, Path(ge=1, le=INT4_MAX, description="a row id")]


def to_utc_in_range(value: datetime) -> datetime:
    """The same instant in UTC, refused when it (or its offset) leaves the representable years."""
    try:
        in_utc = value.astimezone(UTC)
    except OverflowError:
        in_utc = None
    if in_utc is None or not EARLIEST <= in_utc <= LATEST:
        raise ValueError(
            f"must be between {EARLIEST.date().isoformat()} and {LATEST.date().isoformat()} "
            "(UTC, offset applied)"
        )
    return in_utc


# A point in time from a request: an offset is required, the value comes back in UTC.
Timestamp = Annotated[AwareDatetime, AfterValidator(to_utc_in_range)]


def _check_json(value: Any, depth: int, counted: list[int]) -> None:
    """Walk a JSON value, raising ValueError at the first bound it breaks."""
    counted[0] += 1
    if counted[0] > MAX_JSON_ITEMS:
        raise ValueError(f"must hold at most {MAX_JSON_ITEMS} values in all")
    if isinstance(value, dict | list):
        if depth >= MAX_JSON_DEPTH:
            raise ValueError(f"must be nested at most {MAX_JSON_DEPTH} levels deep")
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            _check_json(item, depth + 1, counted)


def bounded_json(value: Any) -> Any:
    """A JSON value nested at most MAX_JSON_DEPTH deep with at most MAX_JSON_ITEMS values."""
    _check_json(value, 0, [0])
    return value


# A free-form JSON value (object, array or scalar) of bounded depth and size.
BoundedJson = Annotated[Any, AfterValidator(bounded_json)]
