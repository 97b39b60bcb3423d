"""Approved changes reach the agent in push replies; its step reports move them (idempotently)."""

from __future__ import annotations

from typing import Any

import orjson
from app.changes.models import Change, ChangeEvent, ChangeStatus
from app.configs.models import ConfigSnapshot
from app.core.db import SessionLocal
from app.hosts.models import Host
from app.metrics.models import Sample
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from tests.agents.payloads import iso, push_body, recent, sample
from tests.changes.factories import host_allowed_to_apply, make_change, sha
from tests.conftest import SignedInClient
from tests.hosts.factories import HostWithToken

PUSH = "/api/v1/agent/push"


class Agent:
    """Pushes as one host's agent, with increasing seqs."""

    def __init__(self, client: TestClient, host: HostWithToken) -> None:
        self.client, self.host, self.seq = client, host, 0

    def push(self, reports: list[dict[str, Any]] | None = None, **body: Any) -> Any:
        self.seq += 1
        payload = push_body([sample(self.seq, recent(1))], agent_id=self.host.agent_id, **body)
        if reports is not None:
            payload["action_reports"] = reports
        reply = self.client.post(
            PUSH,
            content=orjson.dumps(payload),
            headers={"Authorization": f"Bearer {self.host.token}"},
        )
        assert reply.status_code == 200, reply.text
        return reply.json()


def report(action_id: int, seq: int, step: str, status: str, **extra: Any) -> dict[str, Any]:
    """One action report as the agent sends it."""
    return {"action_id": action_id, "seq": seq, "step": step, "status": status,
            "at": iso(recent(1)), **extra}  # fmt: skip


def change_row(change_id: int) -> Change:
    with SessionLocal() as session:
        change = session.get(Change, change_id)
        assert change is not None
        session.expunge(change)
        return change


def events(change_id: int) -> list[ChangeEvent]:
    with SessionLocal() as session:
        return list(
            session.scalars(
                select(ChangeEvent)
                .where(ChangeEvent.change_id == change_id)
                .order_by(ChangeEvent.id)
            )
        )


def test_approving_twice_sends_one_action_until_the_agent_reports_it(
    client: TestClient, operator_client: SignedInClient
) -> None:
    host, snapshot_id = host_allowed_to_apply()
    change_id = make_change(host.id, snapshot_id)
    agent = Agent(client, host)
    assert agent.push()["actions"] == []

    for _ in range(2):
        reply = operator_client.post(f"/api/v1/changes/{change_id}/approve", json={"comment": "ok"})
        assert reply.status_code == 200, reply.text
        assert reply.json()["status"] == "approved"
    assert [e.status for e in events(change_id)] == ["approved"]

    first = agent.push()["actions"]
    assert [(a["type"], a["action_id"], a["kind"]) for a in first] == [("apply", change_id, "fix")]
    assert first[0]["files"][0]["ops"][0]["new"] == ["    gzip on;"]
    assert change_row(change_id).status is ChangeStatus.sent
    # Not reported yet: the same action again (the agent dedupes by action_id).
    assert agent.push()["actions"] == first
    assert agent.push(reports=[report(change_id, 1, "received", "ok")])["actions"] == []
    assert change_row(change_id).status is ChangeStatus.applying


def test_step_reports_are_stored_once_and_the_outcome_finishes_the_change(
    client: TestClient, operator_client: SignedInClient
) -> None:
    host, snapshot_id = host_allowed_to_apply()
    change_id = make_change(host.id, snapshot_id, status=ChangeStatus.sent)
    agent = Agent(client, host)
    steps = [
        report(change_id, 1, "received", "ok"),
        report(change_id, 2, "test", "failed", message='nginx: [emerg] unknown directive "gzp"'),
        report(change_id, 3, "restore", "ok"),
        report(change_id, 4, "outcome", "rolled_back",
               message='nginx: [emerg] unknown directive "gzp"', detail={"failed_step": "test"}),
    ]  # fmt: skip
    agent.push(reports=steps[:2])
    agent.push(reports=steps)  # resent: the first two again
    agent.push(reports=steps[3:])

    change = change_row(change_id)
    assert change.status is ChangeStatus.rolled_back
    assert change.failed_step == "test" and "unknown directive" in (change.outcome_message or "")
    trail = [(e.step, e.step_status) for e in events(change_id) if e.report_seq is not None]
    assert trail == [("received", "ok"), ("test", "failed"), ("restore", "ok"),
                     ("outcome", "rolled_back")]  # fmt: skip
    detail = operator_client.get(f"/api/v1/changes/{change_id}").json()
    assert [e["step"] for e in detail["events"]][-1] == "outcome"


def test_a_host_cannot_report_on_another_hosts_change(client: TestClient) -> None:
    host, _snapshot_id = host_allowed_to_apply()
    other, other_snapshot = host_allowed_to_apply(hostname="web-2")
    foreign = make_change(other.id, other_snapshot, status=ChangeStatus.sent)
    Agent(client, host).push(reports=[report(foreign, 1, "outcome", "verified")])
    assert change_row(foreign).status is ChangeStatus.sent
    assert events(foreign) == []


def test_a_malformed_report_is_refused_alone_and_the_samples_are_kept(client: TestClient) -> None:
    host, snapshot_id = host_allowed_to_apply()
    change_id = make_change(host.id, snapshot_id, status=ChangeStatus.sent)
    reply = Agent(client, host).push(
        reports=[
            {
                "action_id": change_id,
                "seq": 0,
                "step": "test",
                "status": "ok",
                "at": iso(recent(1)),
            },
            report(change_id, 1, "received", "ok"),
        ]
    )
    assert reply["accepted"] == 1
    [refused] = reply["rejected"]
    assert refused["field"] == "action_reports[0].seq"
    assert change_row(change_id).status is ChangeStatus.applying
    with SessionLocal() as session:
        assert (
            session.scalar(
                select(func.count()).select_from(Sample).where(Sample.host_id == host.id)
            )
            == 1
        )


def test_a_change_whose_config_changed_after_approval_is_superseded_not_sent(
    client: TestClient,
) -> None:
    host, snapshot_id = host_allowed_to_apply()
    change_id = make_change(host.id, snapshot_id, status=ChangeStatus.approved)
    with SessionLocal() as session:
        session.execute(update(Host).where(Host.id == host.id).values(config_hash=sha("edited")))
        session.commit()
    assert Agent(client, host).push()["actions"] == []
    change = change_row(change_id)
    assert change.status is ChangeStatus.superseded
    assert "config changed" in (change.outcome_message or "")


def test_reports_and_actions_ride_the_batched_path_too(client: TestClient) -> None:
    """A host with a pending action is answered from the per-push path even among plain pushes."""
    host, snapshot_id = host_allowed_to_apply()
    agent = Agent(client, host)
    agent.push()
    agent.push()  # plain appends from now on
    change_id = make_change(host.id, snapshot_id, status=ChangeStatus.approved)
    assert [a["action_id"] for a in agent.push()["actions"]] == [change_id]


def test_the_snapshot_is_not_touched_by_the_workflow(client: TestClient) -> None:
    host, snapshot_id = host_allowed_to_apply()
    make_change(host.id, snapshot_id, status=ChangeStatus.approved)
    Agent(client, host).push()
    with SessionLocal() as session:
        assert session.get(ConfigSnapshot, snapshot_id) is not None
