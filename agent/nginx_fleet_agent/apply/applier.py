"""Applying one change as a sequence of checked steps, each reported; restored on any failure.

received → check → backup → write → test → reload → verify → outcome, and after a failure
past `write`: restore → reload → outcome rolled_back (or failed when the restore failed).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nginx_fleet_agent.apply.action import ApplyAction, InvalidAction, action_id_of, parse_action
from nginx_fleet_agent.apply.files import (
    FileMeta,
    file_meta,
    must_write_in_place,
    read_bytes,
    write_file,
)
from nginx_fleet_agent.apply.journal import FINISHED, RELOADING, Journal, unfinished
from nginx_fleet_agent.apply.nginx_control import (
    Master,
    NginxControlError,
    bad_lines_since,
    config_test_failure,
    error_log_paths,
    live_workers,
    log_offsets,
    read_master,
    reload,
    run_nginx,
)
from nginx_fleet_agent.apply.store import ActionStore
from nginx_fleet_agent.apply.textpatch import (
    PatchError,
    check_ops,
    decode_dump,
    normalized_lines,
    patch_bytes,
    patch_text,
    sha256_text,
    split_bytes,
    split_text,
)
from nginx_fleet_agent.nginx_syntax import inline_includes, split_dump
from nginx_fleet_agent.redaction import redact_config_text, redact_dump

log = logging.getLogger(__name__)

_POLL_S = 0.05
RESTORE_RELOAD_WAIT_S = 15.0


@dataclass(frozen=True)
class ApplySettings:
    """What the applier needs from the agent's settings."""

    apply_dir: Path
    nginx_binary: str
    verify_s: float
    test_timeout_s: float
    proc: Path = Path("/proc")


@dataclass(frozen=True)
class NginxProbes:
    """How the applier finds the master and checks nginx from outside (given by the agent)."""

    master_pid: Callable[[], int | None]
    # None when stub_status answers or is not configured, else why it does not.
    stub_status_error: Callable[[], str | None] = lambda: None
    build_option: Callable[[str], str | None] = lambda name: None


@dataclass(frozen=True)
class FilePlan:
    """One file to write: its real path, both versions, how to write it."""

    path: str
    original: bytes
    new: bytes
    meta: FileMeta
    in_place: bool


class Refused(Exception):
    """Nothing was written; `reason` is the protocol's detail.reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class StepFailed(Exception):
    """A step after `write` failed; the message is nginx's own words where there are some."""


class Applier:
    """Runs actions one at a time, reporting every step to the store."""

    def __init__(
        self,
        settings: ApplySettings,
        store: ActionStore,
        probes: NginxProbes,
        *,
        on_report: Callable[[dict[str, Any]], None] = lambda report: None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._probes = probes
        self._on_report = on_report

    def refuse_unstarted(self, raw: dict[str, Any], reason: str, message: str) -> None:
        """Record a new action as started and refused at once (apply not allowed, malformed)."""
        action_id = action_id_of(raw)
        if action_id is None or not self._store.start(action_id):
            return
        self._report(action_id, "received", "ok")
        self._report(action_id, "outcome", "refused", message, {"reason": reason})

    def apply(self, raw: dict[str, Any]) -> str | None:
        """Apply one action from a push reply; its outcome status (None for a repeat)."""
        action_id = action_id_of(raw)
        if action_id is None or not self._store.start(action_id):
            return None
        started = time.monotonic()
        self._report(action_id, "received", "ok")
        try:
            action = parse_action(raw)
            master = self._master()
            plans, tree_logs = self._check(action, master)
        except InvalidAction as exc:
            return self._refuse(action_id, "check", "invalid", str(exc))
        except Refused as exc:
            return self._refuse(action_id, "check", exc.reason, str(exc))
        except NginxControlError as exc:
            return self._refuse(action_id, "check", "nginx_error", str(exc))
        except OSError as exc:
            return self._refuse(action_id, "check", "path", f"{exc.filename}: {exc.strerror}")
        self._report(action_id, "check", "ok", detail={"files": [p.path for p in plans]})
        try:
            journal = Journal.create(
                self._settings.apply_dir,
                action_id,
                [(p.path, p.meta, p.in_place, p.original, p.new) for p in plans],
            )
        except OSError as exc:
            return self._refuse(action_id, "backup", "backup", f"cannot back up: {exc}")
        self._report(action_id, "backup", "ok", detail={"journal": str(journal.directory)})
        return self._write_and_watch(action_id, journal, plans, master, tree_logs, started)

    def recover(self) -> None:
        """At start: restore every interrupted apply, then settle actions left without outcome."""
        for journal in unfinished(self._settings.apply_dir):
            self._recover(journal)
        for action_id in self._store.unfinished():
            finished = Journal.load(self._settings.apply_dir / str(action_id))
            outcome = finished.outcome if finished is not None else None
            if outcome is not None:
                # Finished on disk, killed before the outcome report was spooled.
                self._report(
                    action_id, "outcome", outcome["status"], outcome["message"], outcome["detail"]
                )
            else:
                self._report(
                    action_id,
                    "outcome",
                    "refused",
                    "the agent stopped before it wrote anything; nothing was changed",
                    {"reason": "interrupted"},
                )

    def _write_and_watch(
        self,
        action_id: int,
        journal: Journal,
        plans: list[FilePlan],
        master: Master,
        tree_logs: list[str],
        started: float,
    ) -> str:
        step, reloaded = "write", False
        try:
            self._write(plans)
            self._report(
                action_id,
                "write",
                "ok",
                detail={"files": [{"path": p.path, "in_place": p.in_place} for p in plans]},
            )
            step = "test"
            self._report(action_id, "test", "started")
            self._test(master)
            self._report(action_id, "test", "ok")
            step = "reload"
            logs = self._error_logs(master, tree_logs)
            journal.set_phase(RELOADING)
            old_workers, offsets = live_workers(self._settings.proc, master.pid), log_offsets(logs)
            reload(master)
            reloaded = True
            self._report(action_id, "reload", "ok", detail={"master_pid": master.pid})
            step = "verify"
            self._report(
                action_id, "verify", "started", detail={"watch_s": self._settings.verify_s}
            )
            detail = self._verify(master, old_workers, offsets)
            self._report(action_id, "verify", "ok", detail=detail)
        except (StepFailed, NginxControlError, OSError) as exc:
            message = _safe(str(exc))
            self._report(action_id, step, "failed", message)
            return self._roll_back(action_id, journal, master, tree_logs, step, message, reloaded)
        elapsed = round(time.monotonic() - started, 3)
        return self._finish(
            action_id, journal, "verified", "applied and live", {"elapsed_s": elapsed}
        )

    def _check(self, action: ApplyAction, master: Master) -> tuple[list[FilePlan], list[str]]:
        """Every target is a file of the current `nginx -T` set, at its base hash; plan writes."""
        run = run_nginx(
            self._settings.nginx_binary, master, "-T", timeout_s=self._settings.test_timeout_s
        )
        failure = config_test_failure(run)
        if failure is not None:
            raise Refused("stale", f"the current config does not load: {_safe(failure)}")
        raw_files = split_bytes(run.stdout)
        redacted_dump = redact_dump(decode_dump(run.stdout))
        redacted = split_text(redacted_dump)
        # nginx prints full paths; a relative one (never seen) would be the master's cwd's.
        by_real: dict[str, bytes] = {}
        for raw_path in raw_files:
            real = os.path.realpath(os.path.join(master.cwd or "/", os.fsdecode(raw_path)))
            by_real.setdefault(real, raw_path)
        plans: list[FilePlan] = []
        for patch in action.files:
            real = os.path.realpath(patch.path)
            if real not in by_real or not os.path.isfile(real):
                raise Refused("path", f"{patch.path} is not a file of the current nginx -T set")
            if any(plan.path == real for plan in plans):
                raise InvalidAction(f"{patch.path} is the same file as another of the change")
            raw_path = by_real[real]
            text = redacted[raw_path.decode("utf-8", errors="replace")]
            if sha256_text(text) != patch.base_sha256:
                raise Refused("stale", f"{patch.path} changed since the change was made")
            lines = text.split("\n")
            try:
                check_ops(lines, patch.ops)
            except PatchError as exc:
                raise InvalidAction(f"{patch.path}: {exc}") from None
            if sha256_text(patch_text(text, patch.ops)) != patch.new_sha256:
                raise InvalidAction(f"{patch.path}: the ops do not give new_sha256")
            original = read_bytes(real)
            if original != raw_files[raw_path]:
                raise Refused("stale", f"{patch.path} changed on disk while it was checked")
            if len(normalized_lines(original)) != len(lines):
                raise InvalidAction(f"{patch.path}: its lines do not map to the dump's")
            plans.append(
                FilePlan(
                    real,
                    original,
                    patch_bytes(original, patch.ops),
                    file_meta(real),
                    must_write_in_place(real),
                )
            )
        tree = inline_includes(split_dump(redacted_dump))
        tree_logs = [d.args[0].text for d in tree if d.name == "error_log" and d.args]
        return plans, tree_logs

    def _write(self, plans: list[FilePlan]) -> None:
        for plan in plans:
            # The file may have changed since the check: never overwrite someone else's edit.
            if read_bytes(plan.path) != plan.original:
                raise StepFailed(f"{plan.path} changed on disk before it was written")
        for plan in plans:
            write_file(plan.path, plan.new, plan.meta, in_place=plan.in_place)

    def _test(self, master: Master) -> None:
        run = run_nginx(
            self._settings.nginx_binary, master, "-t", timeout_s=self._settings.test_timeout_s
        )
        failure = config_test_failure(run)
        if failure is not None:
            raise StepFailed(failure)

    def _verify(self, master: Master, old: set[int], offsets: dict[Path, int]) -> dict[str, Any]:
        """Watch nginx for the verify period: workers replaced, no bad log line, stub_status."""
        begin = time.monotonic()
        deadline = begin + self._settings.verify_s
        replaced_after: float | None = None
        current: set[int] = set()
        while True:
            current = live_workers(self._settings.proc, master.pid)
            if replaced_after is None and current and not current & old:
                replaced_after = round(time.monotonic() - begin, 3)
            bad = bad_lines_since(offsets)
            if bad:
                raise StepFailed("\n".join(bad))
            if time.monotonic() >= deadline:
                break
            time.sleep(_POLL_S)
        if read_master(self._settings.proc, master.pid) is None:
            raise StepFailed(f"the nginx master {master.pid} exited after the reload")
        if replaced_after is None:
            raise StepFailed(
                f"no new worker processes within {self._settings.verify_s:g} s of the reload "
                f"(workers {sorted(current)}, before {sorted(old)})"
            )
        stub_error = self._probes.stub_status_error()
        if stub_error is not None:
            raise StepFailed(f"stub_status does not answer after the reload: {stub_error}")
        return {"workers_replaced_s": replaced_after, "workers": sorted(current)}

    def _roll_back(
        self,
        action_id: int,
        journal: Journal,
        master: Master | None,
        tree_logs: list[str],
        failed_step: str,
        message: str,
        reloaded: bool,
    ) -> str:
        problems = journal.restore()
        if problems:
            self._report(action_id, "restore", "failed", "\n".join(problems))
            return self._finish(
                action_id,
                journal,
                "failed",
                f"{failed_step} failed ({message}) and the restore failed: {'; '.join(problems)}",
                {"failed_step": failed_step, "journal": str(journal.directory)},
            )
        self._report(action_id, "restore", "ok", detail={"files": [f.path for f in journal.files]})
        if reloaded:
            problem = self._reload_restored(master, tree_logs)
            if problem is not None:
                self._report(action_id, "reload", "failed", problem)
                return self._finish(
                    action_id,
                    journal,
                    "failed",
                    f"{failed_step} failed ({message}); files restored but nginx did not "
                    f"reload them: {problem}",
                    {"failed_step": failed_step, "journal": str(journal.directory)},
                )
            self._report(action_id, "reload", "ok")
        return self._finish(
            action_id,
            journal,
            "rolled_back",
            message,
            {"failed_step": failed_step, "journal": str(journal.directory)},
        )

    def _reload_restored(self, master: Master | None, tree_logs: list[str]) -> str | None:
        """Reload the restored files and wait for new workers; the problem, or None."""
        if master is None or read_master(self._settings.proc, master.pid) is None:
            return "the nginx master is not running"
        try:
            self._test(master)
            old = live_workers(self._settings.proc, master.pid)
            reload(master)
        except (StepFailed, NginxControlError) as exc:
            return _safe(str(exc))
        # The master may still be busy with the failed reload (a failing bind() is retried for
        # 2.5 s), so the restored config gets more time than the verify watch.
        wait_s = max(RESTORE_RELOAD_WAIT_S, self._settings.verify_s)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            current = live_workers(self._settings.proc, master.pid)
            if current and not current & old:
                return None
            time.sleep(_POLL_S)
        return f"no new worker processes within {wait_s:g} s"

    def _recover(self, journal: Journal) -> None:
        action_id = journal.action_id
        log.warning("action %d was interrupted (%s); restoring its files", action_id, journal.phase)
        message = "the agent stopped during the apply; every file was put back"
        pid = self._probes.master_pid()
        master = read_master(self._settings.proc, pid) if pid is not None else None
        # Without a reload signal sent, nginx still runs the old config: restoring is enough.
        self._roll_back(
            action_id, journal, master, [], "interrupted", message, journal.phase == RELOADING
        )

    def _master(self) -> Master:
        pid = self._probes.master_pid()
        master = read_master(self._settings.proc, pid) if pid is not None else None
        if master is None:
            raise Refused("nginx_down", "nginx is not running: a change needs a master to reload")
        return master

    def _error_logs(self, master: Master, tree_logs: list[str]) -> list[Path]:
        prefix = master.option("-p") or self._probes.build_option("prefix") or "/"
        return error_log_paths(
            tree_logs, master, prefix, self._probes.build_option("error-log-path")
        )

    def _refuse(self, action_id: int, step: str, reason: str, message: str) -> str:
        self._report(action_id, step, "failed", message, {"reason": reason})
        self._report(action_id, "outcome", "refused", message, {"reason": reason})
        return "refused"

    def _finish(
        self, action_id: int, journal: Journal, status: str, message: str, detail: dict[str, Any]
    ) -> str:
        # The journal first: killed between the two, recovery re-reports this outcome instead
        # of restoring a change that was verified.
        journal.finish({"status": status, "message": message, "detail": detail})
        self._report(action_id, "outcome", status, message, detail)
        return status

    def _report(
        self,
        action_id: int,
        step: str,
        status: str,
        message: str = "",
        detail: dict[str, Any] | None = None,
    ) -> None:
        report = self._store.report(action_id, step, status, message, detail)
        self._on_report(report)


def _safe(message: str) -> str:
    """nginx's words with any secret they quote redacted (they may echo a directive's value)."""
    return redact_config_text(message)


__all__ = ["FINISHED", "Applier", "ApplySettings", "NginxProbes"]
