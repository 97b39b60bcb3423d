"""Actions the agent has started and step reports not yet confirmed by the server, on disk.

One small JSON file in `<state_dir>/apply/`, rewritten atomically on every change: a report
survives a restart until a 200 reply to a push that carried it, and a repeated action (the
server repeats it until it hears a step of it) is never started twice.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nginx_fleet_agent.apply.files import write_private

log = logging.getLogger(__name__)

STORE_NAME = "actions.json"
# Finished action ids remembered; the server stops repeating an action once it has a step.
MAX_REMEMBERED = 1000


class ActionStore:
    """Started actions (with their last report seq) and the report spool; thread-safe."""

    def __init__(self, apply_dir: Path) -> None:
        apply_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._path = apply_dir / STORE_NAME
        self._lock = threading.Lock()
        self._started: dict[str, dict[str, Any]] = {}
        self._reports: list[dict[str, Any]] = []
        self._load()

    def start(self, action_id: int) -> bool:
        """Remember the action as started; False when it already was (a repeat)."""
        with self._lock:
            if str(action_id) in self._started:
                return False
            self._started[str(action_id)] = {"seq": 0, "finished": False}
            self._forget_oldest_finished()
            self._save()
            return True

    def is_started(self, action_id: int) -> bool:
        """Whether the action was ever started here."""
        with self._lock:
            return str(action_id) in self._started

    def unfinished(self) -> list[int]:
        """Started actions without an outcome report."""
        with self._lock:
            return sorted(int(k) for k, v in self._started.items() if not v["finished"])

    def report(
        self,
        action_id: int,
        step: str,
        status: str,
        message: str = "",
        detail: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Spool the next step report of an action (an `outcome` one finishes it)."""
        with self._lock:
            entry = self._started.setdefault(str(action_id), {"seq": 0, "finished": False})
            entry["seq"] += 1
            report = {
                "action_id": action_id,
                "seq": entry["seq"],
                "step": step,
                "status": status,
                # To the millisecond: steps are often less than a second apart.
                "at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "message": message[:8000],
                "detail": detail or {},
            }
            if step == "outcome":
                entry["finished"] = True
            self._reports.append(report)
            self._save()
        log.info("action %d: %s %s%s", action_id, step, status, f": {message}" if message else "")
        return report

    def pending(self, limit: int) -> list[dict[str, Any]]:
        """Up to `limit` unconfirmed reports, oldest first."""
        with self._lock:
            return [dict(r) for r in self._reports[:limit]]

    def has_pending(self) -> bool:
        """Whether any report waits for delivery."""
        with self._lock:
            return bool(self._reports)

    def confirm(self, reports: list[dict[str, Any]]) -> None:
        """Forget reports a 200 reply confirmed."""
        sent = {(r["action_id"], r["seq"]) for r in reports}
        with self._lock:
            self._reports = [r for r in self._reports if (r["action_id"], r["seq"]) not in sent]
            self._save()

    def _forget_oldest_finished(self) -> None:
        finished = [k for k, v in self._started.items() if v["finished"]]
        for key in sorted(finished, key=int)[: max(0, len(self._started) - MAX_REMEMBERED)]:
            del self._started[key]

    def _load(self) -> None:
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            # Refusing to start would stop metrics too; a lost record only risks a repeated
            # report, and the journals still guard every file.
            log.error("cannot read %s (%s); starting with no action records", self._path, exc)
            return
        self._started = dict(data.get("started", {}))
        self._reports = list(data.get("reports", []))

    def _save(self) -> None:
        data = {"started": self._started, "reports": self._reports}
        write_private(str(self._path), json.dumps(data, separators=(",", ":")).encode())
