"""The one interface every collector implements."""

from __future__ import annotations

from typing import Any, Protocol


class Collector(Protocol):
    """Reads one source; `collect` returns a fragment of a sample keyed by its field name."""

    def collect(self) -> dict[str, Any]:
        """Read the source now."""
        ...
