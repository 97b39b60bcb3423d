"""A sign-in storm run as its own process: `python -m tests.auth.storm URL CONCURRENCY`.

Sends wrong sign-ins with distinct usernames, CONCURRENCY at a time, until its stdin closes;
prints "started" after the first reply, then the count of replies by status as JSON."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from collections import Counter

import httpx


async def _storm(url: str, concurrency: int, stop: asyncio.Event) -> Counter[str]:
    statuses: Counter[str] = Counter()
    numbers = itertools.count()
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:

        async def attacker() -> None:
            while not stop.is_set():
                body = {"username": f"storm-{next(numbers)}", "password": "not-the-password"}
                try:
                    reply = await client.post("/api/v1/auth/login", json=body)
                    statuses[str(reply.status_code)] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1
                if sum(statuses.values()) == 1:
                    print("started", flush=True)

        await asyncio.gather(*(attacker() for _ in range(concurrency)))
    return statuses


async def main(url: str, concurrency: int) -> None:
    """Storm until stdin reaches its end, then print the statuses."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    storm = asyncio.create_task(_storm(url, concurrency, stop))
    await loop.run_in_executor(None, sys.stdin.read)
    stop.set()
    print(json.dumps(await storm), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
