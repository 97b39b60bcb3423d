"""Celery tasks of the configs domain: analysing hosts' configs, periodically and on change,
and pruning what the UI no longer shows."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

from kombu.exceptions import KombuError
from redis.exceptions import RedisError
from sqlalchemy.exc import OperationalError

from app.configs import analyzer, pruning, queueing
from app.configs.schedule import REANALYZE_INTERVAL_S
from app.core.db import SessionLocal, utcnow
from app.findings import service as findings_service
from app.worker.celery_app import celery_app
from app.worker.retry import TRANSIENT_RETRY_POLICY

log = logging.getLogger(__name__)


@celery_app.task(name="configs.analyze_host", **TRANSIENT_RETRY_POLICY)
def analyze_host(host_id: int) -> None:
    """Analyse the host's current snapshot (the latest config it pushed) and store findings.

    The claim is dropped first: a snapshot arriving while this runs queues one more analysis,
    and every snapshot before it is covered by this one."""
    with SessionLocal() as session:
        queueing.release(session=session, host_ids=[host_id])
        session.commit()
        snapshot_id = analyzer.current_snapshot_id(session=session, host_id=host_id)
        if snapshot_id is None:
            log.info("host %d has no stored config to analyse", host_id)
            return
        outcome = analyzer.analyze_snapshot(session=session, snapshot_id=snapshot_id, now=utcnow())
    log.info(
        "host %d, config snapshot %d: analysis %s (%s)",
        host_id,
        snapshot_id,
        outcome.analysis_id,
        outcome.action,
    )


def _send(host_ids: Sequence[int]) -> int:
    """Queue analyze_host for claimed hosts; on a broker failure, release the unsent claims."""
    for sent, host_id in enumerate(host_ids):
        try:
            analyze_host.apply_async((host_id,))
        except (KombuError, RedisError, OSError):
            log.exception(
                "could not queue the analysis of host %d (%d more unsent)",
                host_id,
                len(host_ids) - sent - 1,
            )
            with SessionLocal() as session:
                queueing.release(session=session, host_ids=host_ids[sent:])
                session.commit()
            return sent
    return len(host_ids)


def enqueue_analysis(*, host_id: int) -> bool:
    """Queue the analysis of the host's current config unless one is queued already; True when
    it is queued now or was already. False (logged) when the broker or database is down.

    The push that brought the snapshot is already stored, and failing it would only make the
    agent resend data we have; the snapshot stays 'pending' where an operator can see it, and
    the periodic re-analysis picks it up."""
    try:
        with SessionLocal() as session:
            claimed = queueing.claim_hosts(session=session, host_ids=[host_id], now=utcnow())
            session.commit()
    except OperationalError:
        log.exception("could not record the queued analysis of host %d", host_id)
        return False
    return _send(claimed) == len(claimed)


@celery_app.task(name="configs.reanalyze_fleet", **TRANSIENT_RETRY_POLICY)
def reanalyze_fleet() -> int:
    """Queue the analysis of every host that pushed recently and has none queued or just done.

    Metric-aware rules need fresh figures; an unchanged outcome adds no analysis row."""
    now = utcnow()
    with SessionLocal() as session:
        due = queueing.hosts_due(
            session=session, now=now, interval=timedelta(seconds=REANALYZE_INTERVAL_S)
        )
        claimed = queueing.claim_hosts(session=session, host_ids=due, now=now)
        session.commit()
    queued = _send(claimed)
    log.info("re-analysis queued for %d hosts (%d due)", queued, len(due))
    return queued


@celery_app.task(name="configs.apply_expired_acks", **TRANSIENT_RETRY_POLICY)
def apply_expired_acks() -> int:
    """Re-score the hosts whose acknowledgements expired, so their findings count again."""
    with SessionLocal() as session:
        rescored = findings_service.apply_expired_acks(session=session, now=utcnow())
    if rescored:
        log.info("re-scored %d analyses after acknowledgements expired", rescored)
    return rescored


@celery_app.task(name="configs.prune", **TRANSIENT_RETRY_POLICY)
def prune() -> dict[str, int]:
    """Delete analyses, findings and snapshots the UI no longer shows, a bounded amount per run."""
    with SessionLocal() as session:
        pruned = pruning.prune(session=session, now=utcnow())
    if any(pruned.as_dict().values()):
        log.info("pruned %s", pruned.as_dict())
    return pruned.as_dict()
