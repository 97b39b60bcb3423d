"""The fleet delta: the hosts that pushed since the last `fleet` event, sent once per interval."""

from __future__ import annotations

from app.core import pubsub

FLEET_EVENT = "fleet"
# Names every host of a 10,000-host fleet at a 10 s interval that pushed within one interval
# (1,000/s) with twice the room for jitter, in under ~14 KB; past it the browser refetches anyway.
MAX_DELTA_IDS = 2000


class ChangedHosts:
    """Host ids seen since the last take(), in the order they first changed."""

    def __init__(self, max_ids: int = MAX_DELTA_IDS) -> None:
        self._max_ids = max_ids
        # A dict is an ordered set: the first hosts that changed are the ones named.
        self._ids: dict[int, None] = {}

    def add(self, host_id: int) -> None:
        """Note that a host changed (O(1), whatever its number of pushes)."""
        self._ids[host_id] = None

    def __len__(self) -> int:
        return len(self._ids)

    def take(self) -> pubsub.Event | None:
        """The `fleet` event naming what changed (None when nothing did), and start afresh."""
        if not self._ids:
            return None
        ids, self._ids = self._ids, {}
        named = list(ids)[: self._max_ids]
        return pubsub.encode(
            FLEET_EVENT,
            {"host_ids": named, "changed": len(ids), "truncated": len(ids) > len(named)},
        )
