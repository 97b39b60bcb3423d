"""Minimum spacing between sends to one receiver, across every worker process.

Slack allows about one message per second per incoming webhook and answers 429 beyond that;
spacing sends here avoids most 429s, and Retry-After handles the rest. With Redis (production)
the turn is a key set with NX and a TTL, shared by every worker; embedded mode has one worker
process group, so a lock in the process is enough there.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time

import redis
import redis.exceptions

from app.core.config import get_settings

log = logging.getLogger(__name__)

KEY_PREFIX = "nf:notify:pace:"
# Past this wait the send goes anyway: the receiver's 429 and Retry-After then take over.
MAX_WAIT_S = 30.0

_local_lock = threading.Lock()
_local_next: dict[str, float] = {}


def receiver_key(address: str) -> str:
    """A key naming the receiver without holding its address (a Slack URL is a secret)."""
    return hashlib.sha256(address.encode("utf-8")).hexdigest()[:32]


def _take_local_turn(key: str, spacing_s: float) -> float:
    """Book the next slot in this process; returns how long to wait for it."""
    with _local_lock:
        now = time.monotonic()
        slot = max(now, _local_next.get(key, 0.0))
        _local_next[key] = slot + spacing_s
        return slot - now


def _wait_redis_turn(client: redis.Redis, key: str, spacing_s: float, deadline: float) -> None:
    """Wait until this process holds the key for spacing_s (or the deadline passes)."""
    name = KEY_PREFIX + key
    spacing_ms = max(int(spacing_s * 1000), 1)
    while not client.set(name, "1", nx=True, px=spacing_ms):
        remaining_ms = client.pttl(name)
        wait_s = (remaining_ms if isinstance(remaining_ms, int) and remaining_ms > 0 else 50) / 1000
        if time.monotonic() + wait_s > deadline:
            log.warning("waited %.0f s for a turn to send to one receiver; sending now", MAX_WAIT_S)
            return
        time.sleep(wait_s)


def wait_turn(address: str, *, spacing_s: float = 1.0) -> None:
    """Block until a send to address keeps spacing_s from the previous one; never raises."""
    key = receiver_key(address)
    redis_url = get_settings().redis_url
    if not redis_url:
        time.sleep(min(_take_local_turn(key, spacing_s), MAX_WAIT_S))
        return
    client = redis.Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=2)
    try:
        _wait_redis_turn(client, key, spacing_s, time.monotonic() + MAX_WAIT_S)
    except redis.exceptions.RedisError:
        # Spacing is a courtesy to the receiver; a Redis outage must not stop notifications.
        log.warning("Redis unavailable for send spacing; sending without it", exc_info=True)
    finally:
        client.close()
