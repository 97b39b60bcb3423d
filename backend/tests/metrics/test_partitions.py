"""Time partitions: created ahead, rows without a partition kept, whole partitions expired."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from app.access_log.models import LogStats, LogStatsRollup
from app.core.db import SessionLocal, get_engine, utcnow
from app.core.partitions import Period, drop_detached, ended_unsealed, ensure_partitions, expire
from app.metrics import partitioning, rollups
from app.metrics.bucketing import SeriesSource
from app.metrics.models import Sample, SampleRollup
from app.metrics.samples import insert_samples as insert_skipping_duplicates
from app.metrics.samples import stored_seqs
from app.metrics.series import blended_rows, series_query
from app.metrics.settings import RetentionSettings
from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session

from tests.agents.test_push_batching import embedded
from tests.hosts.factories import insert_samples, make_host, sample_values
from tests.metrics.conftest import partitions_of

__all__ = ["embedded"]  # the SQLite fixture of the batching tests


def table_exists(session: Session, name: str) -> bool:
    """Whether a table of that name exists, attached or not."""
    return bool(session.scalar(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": name}))


def raw_partition(moment: datetime) -> str:
    """The name of the samples partition holding moment."""
    return f"samples_p{Period.quarter_day.floor(moment):%Y%m%d%H}"


def holder_of(session: Session, table: str, where: str) -> list[str]:
    """The partition holding each row of table matching where."""
    return list(
        session.scalars(text(f"SELECT tableoid::regclass::text FROM {table} WHERE {where}"))  # noqa: S608
    )


def test_partitions_are_created_ahead_once_for_every_table(
    db_session: Session, extra_partitions: None
) -> None:
    # Near a month's end the next month's 1-hour partition must exist too.
    now = datetime(2031, 1, 30, 12, tzinfo=UTC)
    created = partitioning.create_ahead(session=db_session, now=now)
    assert "samples_p2031013012" in created and "samples_p2031020212" in created
    assert "samples_p2031013006" not in created and "samples_p2031020218" not in created
    assert {"sample_rollups_1h_p203101", "sample_rollups_1h_p203102"} <= set(created)
    # The access-log tables keep less, in smaller partitions: raw rows by hour, 1-minute
    # rollups by 6 hours, 1-hour ones by day.
    assert {"log_stats_p2031013012", "log_stats_p2031020212"} <= set(created)
    assert "log_upstream_rollups_1m_p2031020100" in created
    assert "log_stats_rollups_1h_p20310202" in created
    # Samples: raw by 6 hours, 1-minute rollups by day, 1-hour ones by month.
    assert len(created) == (13 + 4 + 2) + 2 * (73 + 13 + 4)
    assert partitioning.create_ahead(session=db_session, now=now) == []


def test_two_processes_creating_the_same_partitions_do_not_clash(
    database_url: str, extra_partitions: None
) -> None:
    now = datetime(2032, 6, 1, tzinfo=UTC)
    results: list[list[str]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def create() -> None:
        try:
            with SessionLocal() as session:
                start.wait()
                results.append(partitioning.create_ahead(session=session, now=now))
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=create) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(len(created) for created in results) == [0, (13 + 4 + 1) + 2 * (73 + 13 + 4)]


def test_a_sample_without_a_partition_is_kept_and_moves_in_when_it_is_made(
    db_session: Session, extra_partitions: None
) -> None:
    host = make_host()
    later = utcnow() + timedelta(days=20)
    insert_samples(db_session, [sample_values(host.id, 1, later, active=3)])
    assert holder_of(db_session, "samples", "seq = 1") == ["samples_default"]
    created = ensure_partitions(
        session=db_session, specs=[partitioning.SAMPLES], now=later, ahead=timedelta(0)
    )
    db_session.commit()
    assert created == [raw_partition(later)]
    assert holder_of(db_session, "samples", "seq = 1") == [raw_partition(later)]
    assert db_session.scalar(select(Sample.active)) == 3


def test_retention_drops_whole_expired_partitions_and_keeps_the_others(
    db_session: Session, extra_partitions: None
) -> None:
    host = make_host()
    now = utcnow()
    ensure_partitions(
        session=db_session, specs=partitioning.ALL, now=now, since=now - timedelta(days=5)
    )
    db_session.commit()
    old, edge, fresh = now - timedelta(days=4), now - timedelta(days=2, hours=-1), now
    insert_samples(db_session, [
        sample_values(host.id, 1, old),
        sample_values(host.id, 2, edge),
        sample_values(host.id, 3, fresh),
    ])  # fmt: skip
    removed = rollups.apply_retention(session=db_session, now=now, retention=RetentionSettings())
    dropped = set(removed["raw"].partitions)
    assert raw_partition(old) in dropped
    # The partition holding `edge` also holds rows past the retention: kept whole for now.
    assert raw_partition(edge) not in dropped
    assert removed["raw"].rows_deleted == 0
    left = partitions_of(db_session, "samples")
    assert raw_partition(now) in left and raw_partition(old) not in left
    # Detached, then dropped once the detaching transaction was committed.
    assert not table_exists(db_session, raw_partition(old))
    assert db_session.scalars(select(Sample.seq).order_by(Sample.seq)).all() == [2, 3]
    # Minute rollups are kept 14 days: none of the five days' partitions went.
    assert removed["1m"].partitions == ()


def seal_what_has_ended(now: datetime) -> None:
    """Seal every partition ended by `now`: those made earlier in the session may have ended
    since, and would be sealed before the test's own."""
    while partitioning.seal_all(engine=get_engine(), now=now):
        pass


def test_ended_partitions_get_their_indexes_rebuilt_once(
    db_session: Session, extra_partitions: None
) -> None:
    hosts = [make_host(hostname=f"web-{i}").id for i in range(40)]
    now = utcnow()
    seal_what_has_ended(now)
    ended = now - timedelta(days=1)
    older = ended - timedelta(hours=6)
    for moment in (older, ended):
        ensure_partitions(
            session=db_session, specs=[partitioning.SAMPLES], now=moment, ahead=timedelta(0)
        )
    db_session.commit()
    start = Period.quarter_day.floor(ended)
    # In time order across hosts, as ingest writes them: each host's keys grow mid-index.
    insert_samples(db_session, [
        sample_values(host_id, seq, start + timedelta(seconds=10 * seq), active=seq)
        for seq in range(1, 301)
        for host_id in hosts
    ])  # fmt: skip
    name = raw_partition(ended)
    index_size = f"SELECT pg_relation_size('{name}_pkey')"
    before = db_session.scalar(text(index_size))
    db_session.commit()
    sealed = partitioning.seal_all(engine=get_engine(), now=now)
    assert sealed == [name]
    after = db_session.scalar(text(index_size))
    # Packed to the fillfactor: clearly fewer pages than the time-ordered inserts left.
    assert after < 0.8 * before
    # One partition per run, the most recently ended first; then none is left.
    assert partitioning.seal_all(engine=get_engine(), now=now) == [raw_partition(older)]
    assert partitioning.seal_all(engine=get_engine(), now=now) == []
    # The partition being written is not sealed, and the rows are all there, key and all.
    assert raw_partition(now) not in sealed
    assert db_session.scalar(select(func.count()).select_from(Sample)) == 40 * 300
    assert (
        insert_skipping_duplicates(
            db_session, [sample_values(hosts[0], 7, start + timedelta(seconds=70))]
        )
        == set()
    )


def test_access_log_rollups_are_sealed_and_their_raw_rows_left_to_expire(
    db_session: Session, extra_partitions: None
) -> None:
    hosts = [make_host(hostname=f"web-{i}").id for i in range(40)]
    now = utcnow()
    seal_what_has_ended(now)
    # Older than any partition the migrations made (they reach back as far as the retention).
    ended = now - timedelta(days=10)
    minutes, raw = partitioning.LOG_STATS_ROLLUPS_1M, partitioning.LOG_STATS
    ensure_partitions(session=db_session, specs=[minutes, raw], now=ended, ahead=timedelta(0))
    db_session.commit()
    start = Period.quarter_day.floor(ended)
    # In time order across hosts, as the rollup task writes them.
    db_session.execute(insert(LogStatsRollup), [
        {"host_id": host_id, "resolution": "1m", "bucket_start": start + timedelta(minutes=m),
         "site": "shop.example.com", "requests": 1}
        for m in range(300)
        for host_id in hosts
    ])  # fmt: skip
    db_session.execute(insert(LogStats), [
        {"host_id": host_id, "ts": Period.hour.floor(ended), "seq": 1, "site": "a", "requests": 1}
        for host_id in hosts
    ])  # fmt: skip
    name = minutes.partition_name(start)
    index_size = f"SELECT pg_relation_size('{name}_pkey')"
    before = db_session.scalar(text(index_size))
    db_session.commit()
    # Hourly raw partitions are found once ended, as the 6-hourly ones...
    with get_engine().connect() as connection:
        hour = Period.hour.floor(ended)
        found = ended_unsealed(connection=connection, spec=raw, before=now)
        assert (raw.partition_name(hour), hour + timedelta(hours=1)) in found
    # ... but only the rollups are sealed: raw rows expire when they could be.
    assert partitioning.seal_all(engine=get_engine(), now=now) == [name]
    assert db_session.scalar(text(index_size)) < 0.8 * before
    assert partitioning.seal_all(engine=get_engine(), now=now) == []


def test_expiry_of_one_resolution_leaves_the_other_alone(
    db_session: Session, extra_partitions: None
) -> None:
    host = make_host()
    now = utcnow()
    old = now - timedelta(days=45)
    ensure_partitions(
        session=db_session, specs=[partitioning.SAMPLE_ROLLUPS_1M, partitioning.SAMPLE_ROLLUPS_1H],
        now=now, since=old,
    )  # fmt: skip
    bucket = old.replace(minute=0, second=0, microsecond=0)
    for resolution in ("1m", "1h"):
        db_session.add(
            SampleRollup(
                host_id=host.id, resolution=resolution, bucket_start=bucket, sample_count=1
            )
        )
    db_session.commit()
    expired = expire(
        session=db_session, spec=partitioning.SAMPLE_ROLLUPS_1M, before=now - timedelta(days=30)
    )
    db_session.commit()
    assert f"sample_rollups_1m_p{old:%Y%m%d}" in expired.partitions
    assert db_session.scalars(select(SampleRollup.resolution)).all() == ["1h"]
    assert table_exists(db_session, f"sample_rollups_1m_p{old:%Y%m%d}")
    dropped = drop_detached(session=db_session, specs=[partitioning.SAMPLE_ROLLUPS_1M])
    assert set(dropped) == set(expired.partitions)
    assert not table_exists(db_session, f"sample_rollups_1m_p{old:%Y%m%d}")


def test_a_resent_sample_is_a_no_op(db_session: Session) -> None:
    host = make_host()
    now = utcnow()
    row = sample_values(host.id, 7, now, active=1)
    assert insert_skipping_duplicates(db_session, [row]) == {7}
    assert insert_skipping_duplicates(db_session, [dict(row, active=99)]) == set()
    db_session.commit()
    assert db_session.scalars(select(Sample.active)).all() == [1]


def test_rollups_upsert_into_their_partitions(db_session: Session, extra_partitions: None) -> None:
    host = make_host()
    now = utcnow()
    minute = now.replace(second=0, microsecond=0) - timedelta(minutes=2)
    ensure_partitions(session=db_session, specs=partitioning.ALL, now=now, since=minute)
    db_session.commit()
    insert_samples(db_session, [sample_values(host.id, 1, minute, active=4)])
    rollups.rollup_recent(session=db_session, now=now)
    insert_samples(
        db_session, [sample_values(host.id, 2, minute + timedelta(seconds=10), active=8)]
    )
    rollups.rollup_recent(session=db_session, now=now)
    holders = holder_of(db_session, "sample_rollups", "true ORDER BY resolution")
    assert holders == [f"sample_rollups_1h_p{minute:%Y%m}", f"sample_rollups_1m_p{minute:%Y%m%d}"]
    counts = db_session.scalars(select(SampleRollup.sample_count)).all()
    assert counts == [2, 2]


def test_the_24h_series_from_rollups_equals_the_one_from_raw_samples(db_session: Session) -> None:
    # Every figure present: a rollup weighs a figure missing from some samples slightly wrong
    # (app.metrics.series.weighted_avg), as the 7-day series always did.
    host = make_host()
    now = utcnow()
    start = now - timedelta(hours=24)
    rows = [
        sample_values(
            host.id, seq, start + timedelta(seconds=10 * seq + 3),
            active=seq % 11, req_per_s=float(seq % 13), cpu_pct=float(seq % 7),
        )
        for seq in range(8640)
    ]  # fmt: skip
    insert_samples(db_session, rows)
    rollups.rollup_range(session=db_session, host_id=host.id, start=start, end=now)
    blended = blended_rows(db_session, host_id=host.id, start=start, end=now, step_s=180, now=now)
    raw = db_session.execute(
        series_query(
            db_session, host_id=host.id, start=start, end=now, source=SeriesSource.raw, step_s=180
        )
    ).all()
    assert [row.bucket for row in blended] == [row.bucket for row in raw]
    for mixed, plain in zip(blended, raw, strict=True):
        assert mixed.active == plain.active
        assert mixed.req_per_s == pytest.approx(plain.req_per_s, rel=1e-6)
        assert mixed.cpu_pct == pytest.approx(plain.cpu_pct, rel=1e-6)


def test_on_sqlite_partitions_are_a_no_op_and_retention_deletes(embedded: Session) -> None:
    assert embedded.get_bind().dialect.name == "sqlite"
    now = utcnow()
    assert partitioning.create_ahead(session=embedded, now=now) == []
    host = make_host()
    insert_samples(embedded, [
        sample_values(host.id, 1, now - timedelta(days=3)),
        sample_values(host.id, 2, now),
    ])  # fmt: skip
    embedded.add(
        SampleRollup(
            host_id=host.id, resolution="1h", bucket_start=now - timedelta(days=40), sample_count=1
        )
    )
    embedded.commit()
    removed = rollups.apply_retention(session=embedded, now=now, retention=RetentionSettings())
    assert removed["raw"].rows_deleted == 1 and removed["raw"].partitions == ()
    assert removed["1m"].rows_deleted == 0 and removed["1h"].rows_deleted == 0
    assert embedded.scalars(select(Sample.seq)).all() == [2]
    assert embedded.scalar(select(func.count()).select_from(SampleRollup)) == 1


def test_period_arithmetic() -> None:
    december = datetime(2030, 12, 17, 5, tzinfo=UTC)
    assert Period.month.floor(december) == datetime(2030, 12, 1, tzinfo=UTC)
    assert Period.month.next(Period.month.floor(december)) == datetime(2031, 1, 1, tzinfo=UTC)
    assert Period.day.parse("20301217") == datetime(2030, 12, 17, tzinfo=UTC)
    assert Period.day.parse("default") is None
    assert Period.quarter_day.floor(december) == datetime(2030, 12, 17, tzinfo=UTC)
    assert Period.quarter_day.suffix(datetime(2030, 12, 17, 18, tzinfo=UTC)) == "2030121718"
    assert Period.quarter_day.parse("20301217") is None


def test_stored_seqs_are_found_by_their_ts_on_the_key_and_by_seq_otherwise(
    db_session: Session,
) -> None:
    host = make_host()
    start = utcnow() - timedelta(minutes=5)
    insert_samples(db_session, [
        sample_values(host.id, seq, start + timedelta(seconds=10 * seq)) for seq in (1, 2, 3)
    ])  # fmt: skip
    resent = [{"seq": seq, "ts": start + timedelta(seconds=10 * seq)} for seq in (1, 2, 3, 4)]
    assert stored_seqs(db_session, host_id=host.id, rows=resent, newest_seq=3) == {1, 2, 3}
    # Seq 2 again under another ts is still stored; seq 4 above the newest is not looked for.
    moved = [{"seq": 2, "ts": start}, {"seq": 4, "ts": start}]
    assert stored_seqs(db_session, host_id=host.id, rows=moved, newest_seq=3) == {2}
    # The resend's lookup is a range on the key's (host_id, ts) prefix, not a filter.
    db_session.execute(text("SET LOCAL enable_seqscan = off"))
    statement = select(Sample.seq, Sample.ts).where(
        Sample.host_id == host.id, Sample.ts.between(start, start + timedelta(seconds=30))
    )
    compiled = statement.compile(db_session.get_bind(), compile_kwargs={"literal_binds": True})
    plan = "\n".join(db_session.scalars(text(f"EXPLAIN {compiled}")))
    assert "pkey" in plan and "Filter" not in plan, plan
    assert "Index Cond: ((host_id = " in plan and "(ts >= " in plan, plan
