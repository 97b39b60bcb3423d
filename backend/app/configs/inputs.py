"""What the rules see besides the config: the host's facts and metrics, and their digest."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.configs.window import metrics_window
from app.hosts.models import Host
from app.hosts.models import HostFacts as StoredFacts
from app.metrics.models import Sample


@dataclass(frozen=True, slots=True)
class AnalysisInputs:
    """Facts and metrics for one analysis; None where the host reported nothing."""

    facts: HostFacts | None
    metrics: MetricsWindow | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, stored with the analysis to show what the rules saw."""
        return {
            "facts": _jsonable(self.facts.as_dict()) if self.facts is not None else None,
            "metrics": _jsonable(self.metrics.as_dict()) if self.metrics is not None else None,
        }

    def digest(self) -> str:
        """SHA-256 over the facts and the metrics rounded to two significant digits.

        Rounding keeps a steady host on one digest, so re-analysing it replaces its latest
        analysis instead of adding a point every few minutes."""
        data = self.to_dict()
        if data["metrics"] is not None:
            data["metrics"] = {key: _rounded(value) for key, value in data["metrics"].items()}
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.2g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    return value


def _jsonable(value: Any) -> Any:
    """Tuples and frozensets of the engine's dataclasses as JSON lists (sets sorted)."""
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, frozenset | set):
        return sorted(value)
    if isinstance(value, tuple | list):
        return [_jsonable(item) for item in value]
    return value


def host_facts(*, session: Session, host_id: int) -> HostFacts | None:
    """The engine's facts from the agent's last facts and the workers' fd limit; None if none."""
    stored = session.scalar(select(StoredFacts.facts).where(StoredFacts.host_id == host_id))
    data: dict[str, Any] = dict(stored or {})
    fd_limit = session.scalar(
        select(Sample.worker_fds_limit)
        .join(Host, (Host.id == Sample.host_id) & (Host.last_seq == Sample.seq))
        .where(Host.id == host_id)
    )
    if fd_limit is not None:
        data["worker_fds_limit"] = fd_limit
    return HostFacts.from_dict(data) if data else None


def gather_inputs(*, session: Session, host_id: int, now: datetime) -> AnalysisInputs:
    """Facts and the last hour of metrics of a host."""
    return AnalysisInputs(
        facts=host_facts(session=session, host_id=host_id),
        metrics=metrics_window(session=session, host_id=host_id, now=now),
    )
