"""Sign-in limits under parallel attempts, per address and overall, and the bounded check pool."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from app.auth import password_checks
from app.auth.password_checks import PasswordCheck, password_check_pool
from app.core.config import Settings
from argon2 import PasswordHasher
from fastapi import FastAPI

from tests.conftest import TEST_PASSWORD, MakeUser

LOGIN = "/api/v1/auth/login"


@pytest.fixture
def pool_size(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Call pool_size(workers, queue) to rebuild the password-check pool with that size."""

    def resize(workers: int, queue: int) -> None:
        monkeypatch.setattr(settings, "password_check_workers", workers)
        monkeypatch.setattr(settings, "password_check_queue", queue)
        password_check_pool().shutdown()
        password_check_pool.cache_clear()

    yield resize
    password_check_pool().shutdown()
    password_check_pool.cache_clear()


@pytest.fixture
def argon2_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every argon2 verification from now on (whatever code path calls it)."""
    seen: list[str] = []
    original = PasswordHasher.verify

    def counting(self: PasswordHasher, password_hash: str | bytes, password: str | bytes) -> Any:
        seen.append(threading.current_thread().name)
        return original(self, password_hash, password)

    monkeypatch.setattr(PasswordHasher, "verify", counting)
    return seen


def client_from(app: FastAPI, address: str) -> httpx.AsyncClient:
    """An async client whose requests come from address (the peer the server sees)."""
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")


async def _logins(app: FastAPI, bodies: list[dict[str, str]], address: str) -> list[int]:
    async with client_from(app, address) as client:
        replies = await asyncio.gather(*(client.post(LOGIN, json=body) for body in bodies))
    return [reply.status_code for reply in replies]


def test_parallel_wrong_logins_for_one_user_check_exactly_the_limit(
    app: FastAPI,
    make_user: MakeUser,
    settings: Settings,
    pool_size: Any,
    argon2_checks: list[str],
) -> None:
    pool_size(2, 64)
    user = make_user()
    wrong = [{"username": user.username, "password": "wrong"}] * 50
    statuses = asyncio.run(_logins(app, wrong, "192.0.2.10"))
    limit = settings.login_max_failures
    assert sorted(statuses) == [401] * limit + [429] * (50 - limit)
    assert len(argon2_checks) == limit
    # The checks ran on the password pool, never on the pool that serves requests.
    assert all(name.startswith("password") for name in argon2_checks)


def test_wrong_logins_with_distinct_usernames_are_limited_per_address(
    app: FastAPI, settings: Settings, monkeypatch: pytest.MonkeyPatch, argon2_checks: list[str]
) -> None:
    monkeypatch.setattr(settings, "login_max_failures_per_address", 5)
    bodies = [{"username": f"nobody-{n}", "password": "x"} for n in range(8)]
    statuses = asyncio.run(_logins(app, bodies, "192.0.2.20"))
    assert sorted(statuses) == [401] * 5 + [429] * 3
    assert len(argon2_checks) == 5
    # Another address is not affected.
    other = asyncio.run(_logins(app, bodies[:1], "192.0.2.21"))
    assert other == [401]


def test_wrong_logins_from_many_addresses_are_limited_overall(
    app: FastAPI, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "login_max_failures_overall", 4)
    body = [{"username": "nobody", "password": "x"}]
    statuses = [asyncio.run(_logins(app, body, f"198.51.100.{n}"))[0] for n in range(6)]
    assert statuses == [401] * 4 + [429] * 2


def test_an_address_that_keeps_retrying_after_its_limit_locks_nobody_else_out(
    app: FastAPI, make_user: MakeUser, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by a hostile probe: refused attempts still counted overall, so one address sending
    # cheap 429s could push the overall counter past its limit and block every sign-in.
    monkeypatch.setattr(settings, "login_max_failures_per_address", 3)
    monkeypatch.setattr(settings, "login_max_failures_overall", 10)
    user = make_user()
    wrong = [{"username": f"nobody-{n}", "password": "x"} for n in range(40)]
    statuses = [asyncio.run(_logins(app, [body], "203.0.113.66"))[0] for body in wrong]
    assert statuses == [401] * 3 + [429] * 37
    right = {"username": user.username, "password": TEST_PASSWORD}
    assert asyncio.run(_logins(app, [right], "203.0.113.7")) == [200]


def test_a_successful_login_forgives_the_failures_of_its_username(
    app: FastAPI, make_user: MakeUser, settings: Settings
) -> None:
    user = make_user()
    limit = settings.login_max_failures
    wrong = {"username": user.username, "password": "wrong"}
    right = {"username": user.username, "password": TEST_PASSWORD}
    statuses = [
        asyncio.run(_logins(app, [body], "192.0.2.30"))[0] for body in [wrong] * (limit - 1)
    ]
    assert statuses == [401] * (limit - 1)
    assert asyncio.run(_logins(app, [right], "192.0.2.30")) == [200]
    statuses = [asyncio.run(_logins(app, [wrong], "192.0.2.30"))[0] for _ in range(limit)]
    assert statuses == [401] * limit


def test_a_full_check_pool_answers_503_at_once_and_counts_no_attempt(
    app: FastAPI,
    make_user: MakeUser,
    pool_size: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool_size(1, 0)
    user = make_user()
    entered = threading.Event()
    release = threading.Event()
    real_check = password_checks.check_password

    def slow_check(password: str, password_hash: str | None) -> PasswordCheck:
        entered.set()
        release.wait(timeout=30)
        return real_check(password, password_hash)

    monkeypatch.setattr(password_checks, "check_password", slow_check)

    async def scenario() -> tuple[int, httpx.Response]:
        async with client_from(app, "192.0.2.40") as client:
            first = asyncio.create_task(
                client.post(LOGIN, json={"username": user.username, "password": TEST_PASSWORD})
            )
            assert await asyncio.to_thread(entered.wait, 30)
            busy = await client.post(LOGIN, json={"username": user.username, "password": "x"})
            release.set()
            return (await first).status_code, busy

    first_status, busy = asyncio.run(scenario())
    assert busy.status_code == 503
    assert busy.headers["Retry-After"] == str(password_checks.BUSY_RETRY_AFTER_S)
    assert first_status == 200
