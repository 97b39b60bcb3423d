"""Password checks on a few threads of their own, with a bounded queue in front of them.

argon2id takes 64 MiB and tens of milliseconds of a core per check. Run on the pool that serves
pages and agent pushes, a sign-in storm starves both and multiplies the memory; here at most
`workers` checks run and `queue` wait, and any further sign-in is refused at once."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache

from app.core.config import get_settings
from app.core.security import hash_password, password_needs_rehash, verify_password

# How long a refused sign-in is told to wait: a check takes well under a second.
BUSY_RETRY_AFTER_S = 2


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


class PasswordCheckPool:
    """A thread pool for password checks that refuses work beyond workers + queue."""

    def __init__(self, *, workers: int, queue: int) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="password")
        self._slots = threading.BoundedSemaphore(workers + queue)

    async def check(self, password: str, password_hash: str | None) -> PasswordCheck:
        """Run check_password on the pool; PasswordChecksBusyError when it is full."""
        if not self._slots.acquire(blocking=False):
            raise PasswordChecksBusyError
        try:
            future = self._executor.submit(check_password, password, password_hash)
        except BaseException:
            self._slots.release()
            raise
        # Released when the check ends, even if the client that wanted it went away.
        future.add_done_callback(self._release)
        return await asyncio.wrap_future(future)

    def _release(self, _future: Future[PasswordCheck]) -> None:
        self._slots.release()

    def shutdown(self) -> None:
        """Stop the threads after the running checks."""
        self._executor.shutdown(wait=True, cancel_futures=True)


@lru_cache(maxsize=1)
def password_check_pool() -> PasswordCheckPool:
    """The process-wide pool, sized by the settings."""
    settings = get_settings()
    return PasswordCheckPool(
        workers=settings.password_check_workers, queue=settings.password_check_queue
    )
