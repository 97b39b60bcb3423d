"""The fleet, summary and top-findings queries read indexes, never whole big tables (EXPLAIN)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, get_args

import pytest
from app.core.db import get_engine, utcnow
from app.findings.service import top_findings_query
from app.hosts.fleet import FleetFilter, fleet_count_query, fleet_page_query, summary_query
from app.hosts.schemas import FleetSort, SortOrder
from app.models import Base
from sqlalchemy import event, text
from sqlalchemy.orm import Session
from sqlalchemy.sql import Executable

from tests.hosts.fleet_rows import insert_fleet

HOSTS = 5000
# Tables that grow with history, not with the fleet: a scan of them per request never fits.
BIG_TABLES = {"samples", "findings", "config_analyses", "config_snapshots"}


def plan_nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node of an EXPLAIN (FORMAT JSON) plan, depth first."""
    yield plan
    for child in plan.get("Plans", []):
        yield from plan_nodes(child)


@contextmanager
def explained() -> Iterator[list[list[dict[str, Any]]]]:
    """Run statements as EXPLAIN (FORMAT JSON) instead, collecting their plans' nodes."""
    plans: list[list[dict[str, Any]]] = []
    engine = get_engine()

    def explain(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool):
        if statement.lstrip().upper().startswith("SELECT"):
            statement = f"EXPLAIN (FORMAT JSON) {statement}"
        return statement, params

    def collect(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool):
        if statement.startswith("EXPLAIN"):
            [[document]] = cursor.fetchall()
            document = json.loads(document) if isinstance(document, str) else document
            plans.append(list(plan_nodes(document[0]["Plan"])))

    event.listen(engine, "before_cursor_execute", explain, retval=True)
    event.listen(engine, "after_cursor_execute", collect)
    try:
        yield plans
    finally:
        event.remove(engine, "before_cursor_execute", explain)
        event.remove(engine, "after_cursor_execute", collect)


def scans(nodes: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(node type, relation or index name) of every scan of a plan."""
    found = set()
    for node in nodes:
        if "Index Name" in node:
            found.add((node["Node Type"], node["Index Name"]))
        elif "Relation Name" in node:
            found.add((node["Node Type"], node["Relation Name"]))
    return found


def seq_scanned(nodes: list[dict[str, Any]]) -> set[str]:
    """Tables (partitions by their parent's name prefix) read by a Seq Scan."""
    return {node["Relation Name"] for node in nodes if node["Node Type"] == "Seq Scan"}


def indexes(nodes: list[dict[str, Any]]) -> set[str]:
    """Every index a plan reads."""
    return {node["Index Name"] for node in nodes if "Index Name" in node}


def no_big_table_scanned(nodes: list[dict[str, Any]]) -> None:
    """Assert that no table growing with history (nor a partition of one) is read whole."""
    big = {
        name
        for name in seq_scanned(nodes)
        if any(name == table or name.startswith(f"{table}_") for table in BIG_TABLES)
    }
    assert not big, scans(nodes)


@pytest.fixture(scope="module")
def big_fleet(database_url: str) -> Iterator[None]:
    """HOSTS hosts with analyses and findings, vacuumed and analysed like a settled database."""
    with Session(get_engine()) as session:
        insert_fleet(session, hosts=HOSTS)
    with get_engine().connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE"))
    yield
    tables = ", ".join(f'"{table.name}"' for table in Base.metadata.sorted_tables)
    with get_engine().begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))


@pytest.fixture(autouse=True)
def _empty_tables_after_test() -> Iterator[None]:
    """The module's fleet stays for all its tests (big_fleet empties the tables at the end)."""
    yield


def plan_of(statement: Executable) -> list[dict[str, Any]]:
    """The nodes of the plan PostgreSQL chooses for a statement."""
    with get_engine().connect() as conn, explained() as plans:
        conn.execute(statement)
    [nodes] = plans
    return nodes


def page_query(
    *,
    sort: FleetSort = "hostname",
    order: SortOrder = "asc",
    offset: int = 0,
    fleet_filter: FleetFilter | None = None,
) -> Executable:
    """The fleet page query of GET /fleet for these parameters."""
    return fleet_page_query(
        dialect="postgresql",
        fleet_filter=fleet_filter or FleetFilter(labels={}),
        sort=sort,
        order=order,
        limit=50,
        offset=offset,
        now=utcnow(),
        push_interval_s=10,
    )


ALL_SORTS: tuple[FleetSort, ...] = get_args(FleetSort)
# The sorts a page is read off an index for, with that index: each figure worst first.
INDEXED_SORTS: dict[tuple[FleetSort, SortOrder], str] = {
    ("hostname", "asc"): "ix_hosts_hostname_id",
    ("hostname", "desc"): "ix_hosts_hostname_id",
    ("last_seen_at", "desc"): "ix_hosts_sort_last_seen_at",
    ("req_per_s", "desc"): "ix_hosts_sort_req_per_s",
    ("active", "desc"): "ix_hosts_sort_active",
    ("waiting", "desc"): "ix_hosts_sort_waiting",
    ("drops_per_s", "desc"): "ix_hosts_sort_drops_per_s",
    ("cpu_pct", "desc"): "ix_hosts_sort_cpu_pct",
    ("mem_used_pct", "desc"): "ix_hosts_sort_mem_used_pct",
    ("fds", "desc"): "ix_hosts_sort_fds_used_pct",
}
# One host in a hundred: what a label filter that narrows the fleet looks like.
ONE_RACK = FleetFilter(labels={"rack": {"r7"}})


@pytest.mark.parametrize("sort", ALL_SORTS)
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_no_page_reads_a_history_table_whole(
    big_fleet: None, sort: FleetSort, order: SortOrder
) -> None:
    nodes = plan_of(page_query(sort=sort, order=order))
    no_big_table_scanned(nodes)
    # The latest analysis of a host is one probe of its (host_id, id) index.
    assert "ix_config_analyses_host_id_id" in indexes(nodes), scans(nodes)


@pytest.mark.parametrize(("sort", "order"), list(INDEXED_SORTS))
def test_a_first_page_is_read_off_the_sort_index(
    big_fleet: None, sort: FleetSort, order: SortOrder
) -> None:
    nodes = plan_of(page_query(sort=sort, order=order))
    assert INDEXED_SORTS[sort, order] in indexes(nodes), scans(nodes)
    assert "hosts" not in seq_scanned(nodes), scans(nodes)
    # The index gives the order: nothing sorts the fleet.
    assert not [node for node in nodes if node["Node Type"] == "Sort"], scans(nodes)


def test_a_label_filter_reads_the_labels_index(big_fleet: None) -> None:
    now = utcnow()
    count = fleet_count_query(
        dialect="postgresql", fleet_filter=ONE_RACK, now=now, push_interval_s=10
    )
    assert ("Bitmap Index Scan", "ix_hosts_labels") in scans(plan_of(count))
    # Sorted by a column without an index, the page's hosts are chosen among the matching ones.
    nodes = plan_of(page_query(fleet_filter=ONE_RACK, sort="score"))
    assert ("Bitmap Index Scan", "ix_hosts_labels") in scans(nodes)
    no_big_table_scanned(nodes)


def test_the_summary_reads_each_latest_analysis_by_its_index(big_fleet: None) -> None:
    now = utcnow()
    for fleet_filter in (FleetFilter(labels={}), ONE_RACK):
        nodes = plan_of(
            summary_query(
                dialect="postgresql", fleet_filter=fleet_filter, now=now, push_interval_s=10
            )
        )
        no_big_table_scanned(nodes)
        assert "ix_config_analyses_host_id_id" in indexes(nodes), scans(nodes)
    assert ("Bitmap Index Scan", "ix_hosts_labels") in scans(nodes)


def test_top_findings_read_only_the_findings_of_latest_analyses(big_fleet: None) -> None:
    nodes = plan_of(top_findings_query(dialect="postgresql", now=utcnow()))
    no_big_table_scanned(nodes)
    assert {"ix_config_analyses_host_id_id", "ix_findings_analysis_id"} <= indexes(nodes)
