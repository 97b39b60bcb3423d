"""Gathering the pushes of concurrent requests into batches for one worker thread and commit."""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Callable, Sequence

from starlette.concurrency import run_in_threadpool

from app.agents.batch_ingest import Outcome, PushRequest, store_batch
from app.agents.schemas import PushReply

# Large enough to carry a busy process's pushes in one commit, small enough that one batch
# holds a database connection only for some milliseconds.
MAX_BATCH = 200

StoreBatch = Callable[[Sequence[PushRequest]], list[Outcome]]


class PushBatcher:
    """Queues pushes; one consumer stores whatever is queued as one batch, then the next.

    No timer: while a batch is being stored, the pushes that arrive meanwhile queue up and
    form the next batch, so an idle process stores a lone push at once."""

    def __init__(self, store: StoreBatch = store_batch, max_batch: int = MAX_BATCH) -> None:
        self._store = store
        self._max_batch = max_batch
        self._queued: deque[tuple[PushRequest, asyncio.Future[PushReply]]] = deque()
        self._consumer: asyncio.Task[None] | None = None

    async def submit(self, request: PushRequest) -> PushReply:
        """Store a push with the others queued now; its reply, or its own error raised."""
        future: asyncio.Future[PushReply] = asyncio.get_running_loop().create_future()
        self._queued.append((request, future))
        if self._consumer is None:
            self._consumer = asyncio.create_task(self._consume())
        return await future

    async def _consume(self) -> None:
        """Store batches until the queue is empty (a cancelled consumer cancels its waiters)."""
        batch: list[tuple[PushRequest, asyncio.Future[PushReply]]] = []
        try:
            while self._queued:
                count = min(len(self._queued), self._max_batch)
                batch = [self._queued.popleft() for _ in range(count)]
                try:
                    outcomes = await run_in_threadpool(self._store, [item for item, _ in batch])
                except Exception as error:  # every waiter gets the error
                    outcomes = [error] * len(batch)
                for (_, future), outcome in zip(batch, outcomes, strict=True):
                    # A request whose client went away has cancelled its future already.
                    if future.done():
                        continue
                    if isinstance(outcome, Exception):
                        future.set_exception(outcome)
                    else:
                        future.set_result(outcome)
                batch = []
        finally:
            self._consumer = None
            for _, future in [*batch, *self._queued]:
                future.cancel()
            self._queued.clear()


_batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PushBatcher] = (
    weakref.WeakKeyDictionary()
)


def push_batcher() -> PushBatcher:
    """The batcher of the running event loop (futures and tasks belong to one loop)."""
    loop = asyncio.get_running_loop()
    batcher = _batchers.get(loop)
    if batcher is None:
        batcher = _batchers[loop] = PushBatcher()
    return batcher
