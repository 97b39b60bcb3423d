"""Fixtures of the analysis tests: the engine is pure, so these tests need no database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _empty_tables_after_test() -> Iterator[None]:
    """Override the backend's table cleanup: analysis tests touch no database."""
    yield
