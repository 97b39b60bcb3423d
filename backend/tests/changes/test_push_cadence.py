"""Push replies ask an agent to push sooner (`next_push_s`) only while a change is in flight."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from app.changes.cadence import PROPOSAL_WINDOW
from app.changes.models import ChangeStatus, Rollout
from app.core.config import get_settings
from app.core.db import SessionLocal, utcnow
from app.hosts.models import Host
from fastapi.testclient import TestClient

from tests.changes.factories import host_allowed_to_apply, make_change
from tests.changes.test_agent_loop import Agent, change_row, report
from tests.configs.factories import host_with_config, set_facts
from tests.conftest import SignedInClient

HINT = 2


def _rollout() -> int:
    with SessionLocal() as session:
        rollout = Rollout(rule="G-off", created_by="tester", created_at=utcnow())
        session.add(rollout)
        session.commit()
        return rollout.id


@pytest.fixture
def hint_setting(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Change NGINX_FLEET_CHANGE_PUSH_INTERVAL_S within a test; restored afterwards."""
    yield monkeypatch
    monkeypatch.undo()
    get_settings.cache_clear()


def test_the_hint_lasts_from_proposal_to_outcome(
    client: TestClient, operator_client: SignedInClient
) -> None:
    host, snapshot_id = host_allowed_to_apply()
    agent = Agent(client, host)
    assert get_settings().change_push_interval_s == HINT
    assert agent.push()["next_push_s"] is None

    change_id = make_change(host.id, snapshot_id)  # proposed by a person
    assert agent.push()["next_push_s"] == HINT
    assert agent.push()["next_push_s"] == HINT  # plain appends: the batched path says it too

    approved = operator_client.post(f"/api/v1/changes/{change_id}/approve", json={})
    assert approved.status_code == 200, approved.text
    sent = agent.push()
    assert [a["action_id"] for a in sent["actions"]] == [change_id]
    assert sent["next_push_s"] == HINT
    assert agent.push(reports=[report(change_id, 1, "received", "ok")])["next_push_s"] == HINT
    assert change_row(change_id).status is ChangeStatus.applying

    # The push that reports the outcome is answered at the host's own interval again.
    done = agent.push(reports=[report(change_id, 2, "outcome", "verified")])
    assert change_row(change_id).status is ChangeStatus.verified
    assert done["next_push_s"] is None
    assert done["push_interval_s"] == get_settings().push_interval_s
    assert agent.push()["next_push_s"] is None


@pytest.mark.parametrize("facts", [{}, {"apply_allowed": False}])
def test_a_read_only_host_never_gets_the_hint(client: TestClient, facts: dict[str, bool]) -> None:
    host, snapshot_id = host_with_config("events {}\n")
    set_facts(host.id, {"nginx_version": "1.22.1", **facts})
    agent = Agent(client, host)
    for status in (ChangeStatus.proposed, ChangeStatus.sent):
        change_id = make_change(host.id, snapshot_id, status=status)
        reply = agent.push()
        assert reply["next_push_s"] is None
        if status is ChangeStatus.sent:
            assert [a["action_id"] for a in reply["actions"]] == [change_id]


def test_the_hint_ends_when_the_agent_stops_allowing_apply(client: TestClient) -> None:
    host, snapshot_id = host_allowed_to_apply()
    make_change(host.id, snapshot_id)
    agent = Agent(client, host)
    assert agent.push()["next_push_s"] == HINT
    # The facts of this very push say apply is no longer allowed.
    reply = agent.push(facts={"nginx_version": "1.22.1", "apply_allowed": False})
    assert reply["next_push_s"] is None


def test_finished_and_forgotten_changes_do_not_speed_a_host_up(client: TestClient) -> None:
    host, snapshot_id = host_allowed_to_apply()
    for status in (ChangeStatus.verified, ChangeStatus.rejected, ChangeStatus.superseded):
        make_change(host.id, snapshot_id, status=status)
    stale = utcnow() - PROPOSAL_WINDOW - timedelta(minutes=1)
    make_change(host.id, snapshot_id, created_at=stale)  # proposed, never approved
    assert Agent(client, host).push()["next_push_s"] is None


def test_a_rollouts_later_waves_wait_at_the_usual_interval(client: TestClient) -> None:
    """A fleet-wide rollout proposes a change on every host at once: only approved waves push
    sooner, or the whole fleet would."""
    host, snapshot_id = host_allowed_to_apply()
    agent = Agent(client, host)
    change_id = make_change(host.id, snapshot_id, rollout_id=_rollout(), wave=1)
    assert agent.push()["next_push_s"] is None
    with SessionLocal() as session:
        change = change_row(change_id)
        change.status = ChangeStatus.approved
        session.merge(change)
        session.commit()
    assert agent.push()["next_push_s"] == HINT


@pytest.mark.parametrize("setting", ["0", "10", "30"])
def test_the_hint_is_a_setting_and_off_when_not_shorter_than_the_interval(
    client: TestClient, hint_setting: pytest.MonkeyPatch, setting: str
) -> None:
    hint_setting.setenv("NGINX_FLEET_CHANGE_PUSH_INTERVAL_S", setting)
    get_settings.cache_clear()
    host, snapshot_id = host_allowed_to_apply()
    make_change(host.id, snapshot_id)
    assert get_settings().push_interval_s == 10
    assert Agent(client, host).push()["next_push_s"] is None


def test_a_shorter_setting_is_sent_as_is(
    client: TestClient, hint_setting: pytest.MonkeyPatch
) -> None:
    hint_setting.setenv("NGINX_FLEET_CHANGE_PUSH_INTERVAL_S", "5")
    get_settings.cache_clear()
    host, snapshot_id = host_allowed_to_apply()
    make_change(host.id, snapshot_id, status=ChangeStatus.applying)
    assert Agent(client, host).push()["next_push_s"] == 5


def _preview(client: SignedInClient, host_id: int) -> None:
    reply = client.post(
        f"/api/v1/hosts/{host_id}/changes/preview",
        json={"finding_keys": ["G-off@/etc/nginx/nginx.conf:http/gzip"]},
    )
    assert reply.status_code == 200, reply.text


def test_an_operators_preview_speeds_the_host_up_for_a_one_click_approval(
    client: TestClient, operator_client: SignedInClient
) -> None:
    """ "Approve and apply" proposes and approves at once: the preview before it is the signal."""
    host, _ = host_allowed_to_apply()
    agent = Agent(client, host)
    assert agent.push()["next_push_s"] is None
    _preview(operator_client, host.id)
    assert agent.push()["next_push_s"] == HINT
    with SessionLocal() as session:
        row = session.get(Host, host.id)
        assert row is not None
        row.change_previewed_at = utcnow() - PROPOSAL_WINDOW - timedelta(seconds=1)
        session.commit()
    assert agent.push()["next_push_s"] is None


def test_a_viewers_preview_does_not(client: TestClient, viewer_client: SignedInClient) -> None:
    host, _ = host_allowed_to_apply()
    _preview(viewer_client, host.id)
    assert Agent(client, host).push()["next_push_s"] is None
