"""A live stream ends with its session (logout, disabled, deleted) and is bounded per user."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx
import pytest
from app.auth.cookies import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE
from app.auth.models import UserSession
from app.auth.service import TOUCH_INTERVAL
from app.core.config import Settings
from app.core.db import SessionLocal
from app.events.stream import session_is_live, stream_slots
from app.users.models import Role, User
from fastapi import FastAPI
from sqlalchemy import delete, select

from tests.conftest import TEST_PASSWORD, LoginAs, MakeUser
from tests.events.live_server import serve

EVENTS = "/api/v1/events"


@dataclass
class StreamReader:
    """Follows /events in a thread: the status, the event names, and whether it ended."""

    base_url: str
    cookies: httpx.Cookies
    status: int | None = None
    names: list[str] = field(default_factory=list)
    opened: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:
            with (
                httpx.Client(base_url=self.base_url, cookies=self.cookies, timeout=30) as client,
                client.stream("GET", EVENTS) as stream,
            ):
                self.status = stream.status_code
                self.opened.set()
                for line in stream.iter_lines():
                    if line.startswith("event:"):
                        self.names.append(line.partition(":")[2].strip())
        except httpx.RemoteProtocolError:
            self.names.append("(cut off)")  # the test server stopped under an open stream
        finally:
            self.opened.set()
            self.ended.set()


@contextmanager
def signed_in_stream(base_url: str, user: User) -> Iterator[tuple[httpx.Client, StreamReader]]:
    """A browser signed in as user, with one live stream open in a thread."""
    with httpx.Client(base_url=base_url, timeout=10) as browser:
        login = browser.post(
            "/api/v1/auth/login", json={"username": user.username, "password": TEST_PASSWORD}
        )
        assert login.status_code == 200, login.text
        browser.headers[CSRF_HEADER] = browser.cookies[CSRF_COOKIE]
        reader = StreamReader(base_url, browser.cookies)
        threading.Thread(target=reader.run, daemon=True).start()
        assert reader.opened.wait(timeout=10)
        assert reader.status == 200
        yield browser, reader


def _disable(user: User) -> None:
    with SessionLocal() as session:
        row = session.get(User, user.id)
        assert row is not None
        row.disabled = True
        session.commit()


def _delete(user: User) -> None:
    with SessionLocal() as session:
        session.execute(delete(User).where(User.id == user.id))
        session.commit()


ENDINGS: dict[str, Callable[[httpx.Client, User], object]] = {
    "logout": lambda browser, _user: browser.post("/api/v1/auth/logout").raise_for_status(),
    "disabled": lambda _browser, user: _disable(user),
    "deleted": lambda _browser, user: _delete(user),
}


@pytest.fixture
def quick_recheck(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "events_recheck_s", 0.2)


@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("broker", ["redis", "in-process"])
def test_the_stream_ends_with_the_session(
    app: FastAPI,
    make_user: MakeUser,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    quick_recheck: None,
    ending: str,
    broker: str,
) -> None:
    if broker == "in-process":
        monkeypatch.setattr(settings, "redis_url", None)
    user = make_user(role=Role.viewer)
    with serve(app) as base_url, signed_in_stream(base_url, user) as (browser, reader):
        # Still open after several re-checks while the session lives.
        assert not reader.ended.wait(timeout=0.8)
        ENDINGS[ending](browser, user)
        assert reader.ended.wait(timeout=10), f"the stream outlived the session ({ending})"
    assert reader.names[-1:] == ["session_ended"]
    assert stream_slots.open_streams(user.id) == 0


def test_live_streams_are_bounded_per_user(
    app: FastAPI, make_user: MakeUser, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "events_max_streams_per_user", 2)
    user = make_user(role=Role.viewer)
    other = make_user(role=Role.viewer)
    with serve(app) as base_url, signed_in_stream(base_url, user) as (browser, _first):
        second = StreamReader(base_url, browser.cookies)
        threading.Thread(target=second.run, daemon=True).start()
        assert second.opened.wait(timeout=10)
        assert second.status == 200
        third = httpx.get(f"{base_url}{EVENTS}", cookies=browser.cookies, timeout=10)
        assert third.status_code == 429
        assert "Retry-After" in third.headers
        # Another user is not affected.
        with signed_in_stream(base_url, other) as (_, theirs):
            assert theirs.status == 200


def test_the_stream_re_check_does_not_keep_an_idle_session_alive(login_as: LoginAs) -> None:
    # An open stream (a forgotten background tab) must not slide the idle expiry forward.
    viewer = login_as(Role.viewer)
    session_id = viewer.cookies[SESSION_COOKIE]
    with SessionLocal() as session:
        row = session.scalars(
            select(UserSession).where(UserSession.user_id == viewer.user.id)
        ).one()
        row.last_seen_at -= TOUCH_INTERVAL * 2
        session.commit()
        before = row.expires_at
    assert session_is_live(session_id)
    with SessionLocal() as session:
        row = session.scalars(
            select(UserSession).where(UserSession.user_id == viewer.user.id)
        ).one()
        assert row.expires_at == before
