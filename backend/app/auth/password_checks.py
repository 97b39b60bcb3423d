"""Password checks on a few threads of their own, with a bounded queue in front of them.

argon2id takes 64 MiB and tens of milliseconds of a core per check. Run on the pool that serves
pages and agent pushes, a sign-in storm starves both and multiplies the memory; here at most
`workers` checks run and `queue` wait, and any further sign-in is refused at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

from app.core.config import get_settings
from app.core.security import hash_password, password_needs_rehash, verify_password

# How long a refused sign-in is told to wait: a check takes well under a second.
BUSY_RETRY_AFTER_S = 2
# Niceness of the check threads: when the cores are busy, pages and agent pushes go first.
CHECK_THREAD_NICENESS = 10


class PasswordChecksBusyError(Exception):
    """Every password-check thread is busy and the queue in front of them is full."""


@dataclass(frozen=True, slots=True)
class PasswordCheck:
    """The outcome of one check: valid or not, and a stronger hash when it is due."""

    valid: bool
    new_hash: str | None


def check_password(password: str, password_hash: str | None) -> PasswordCheck:
    """Verify a password (a missing hash costs the same); rehash when the parameters grew."""
    valid = verify_password(password, password_hash)
    if valid and password_hash is not None and password_needs_rehash(password_hash):
        return PasswordCheck(valid=True, new_hash=hash_password(password))
    return PasswordCheck(valid=valid, new_hash=None)


def _yield_to_requests() -> None:
    """Lower this thread's CPU priority (Linux schedules threads by their own niceness)."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), CHECK_THREAD_NICENESS)


class PasswordCheckPool:
    """A thread pool for password checks that refuses work beyond workers + queue."""

    def __init__(self, *, workers: int, queue: int) -> None:
        self._executor = ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="password", initializer=_yield_to_requests
        )
        self._slots = threading.BoundedSemaphore(workers + queue)

    @contextmanager
    def slot(self) -> Iterator[CheckSlot]:
        """A place in the pool for one check (PasswordChecksBusyError at once when full).

        Taken before the attempt is counted, so a sign-in refused as busy costs no attempt."""
        if not self._slots.acquire(blocking=False):
            raise PasswordChecksBusyError
        slot = CheckSlot(self)
        try:
            yield slot
        finally:
            if not slot.submitted:
                self._slots.release()

    def _submit(self, password: str, password_hash: str | None) -> Future[PasswordCheck]:
        future = self._executor.submit(check_password, password, password_hash)
        # Released when the check ends, even if the client that wanted it went away.
        future.add_done_callback(self._release)
        return future

    def _release(self, _future: Future[PasswordCheck]) -> None:
        self._slots.release()

    def shutdown(self) -> None:
        """Stop the threads after the running checks."""
        self._executor.shutdown(wait=True, cancel_futures=True)


class CheckSlot:
    """A reserved place in a PasswordCheckPool, good for one check."""

    def __init__(self, pool: PasswordCheckPool) -> None:
        self._pool = pool
        self.submitted = False

    async def check(self, password: str, password_hash: str | None) -> PasswordCheck:
        """Run check_password on the pool's threads and wait for it."""
        if self.submitted:
            raise RuntimeError("a slot is good for one check")
        future = self._pool._submit(password, password_hash)
        self.submitted = True
        return await asyncio.wrap_future(future)


@lru_cache(maxsize=1)
def password_check_pool() -> PasswordCheckPool:
    """The process-wide pool, sized by the settings."""
    settings = get_settings()
    return PasswordCheckPool(
        workers=settings.password_check_workers, queue=settings.password_check_queue
    )
