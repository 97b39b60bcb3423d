"""Takes actions from push replies and applies them one at a time beside the agent loop."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from nginx_fleet_agent import defaults
from nginx_fleet_agent.apply.action import action_id_of
from nginx_fleet_agent.apply.applier import Applier, ApplySettings, NginxProbes
from nginx_fleet_agent.apply.store import ActionStore
from nginx_fleet_agent.config import AgentConfig
from nginx_fleet_agent.sampler import Sampler

log = logging.getLogger(__name__)


class ApplyRunner:
    """One apply thread at a time; the loop keeps sampling and pushes each step as it comes."""

    def __init__(self, config: AgentConfig, sampler: Sampler, proc: Path = Path("/proc")) -> None:
        self.store = ActionStore(config.apply_dir)
        self._allowed = config.allow_apply
        self._sampler = sampler
        self._thread: threading.Thread | None = None
        self._refresh_wanted = threading.Event()
        self.applier = Applier(
            ApplySettings(
                apply_dir=config.apply_dir,
                nginx_binary=config.nginx_binary,
                verify_s=config.apply_verify_s,
                test_timeout_s=defaults.APPLY_TEST_TIMEOUT_S,
                proc=proc,
            ),
            self.store,
            NginxProbes(
                master_pid=lambda: sampler.processes.find_master()[0],
                stub_status_error=self._stub_status_error,
                build_option=self._build_option,
            ),
            on_report=self._reported,
        )

    @property
    def busy(self) -> bool:
        """Whether an action is being applied now."""
        return self._thread is not None and self._thread.is_alive()

    def recover(self) -> None:
        """Restore applies an earlier run left unfinished (before anything else is done)."""
        self.applier.recover()

    def submit(self, actions: object) -> None:
        """Start the first new action of a reply; the server repeats the others until then."""
        if not isinstance(actions, list):
            log.warning("ignoring `actions` of the reply: not a list")
            return
        for raw in actions:
            action_id = action_id_of(raw)
            if action_id is None:
                log.warning("ignoring an action without a usable action_id: %.200r", raw)
                continue
            if self.store.is_started(action_id):
                continue  # a repeat: the server has not yet seen a report of it
            assert isinstance(raw, dict)
            if not self._allowed:
                self.applier.refuse_unstarted(
                    raw, "not_allowed", "applying changes is not allowed on this host (allow_apply)"
                )
                continue
            if self.busy:
                return
            self._thread = threading.Thread(
                target=self._run, args=(raw,), name=f"apply-{action_id}", daemon=True
            )
            self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the running apply (tests, shutdown)."""
        if self._thread is not None:
            self._thread.join(timeout)

    def take_refresh(self) -> bool:
        """True once after an apply finished: the loop should re-read `nginx -T` now."""
        if self._refresh_wanted.is_set():
            self._refresh_wanted.clear()
            return True
        return False

    def _run(self, raw: dict[str, Any]) -> None:
        try:
            self.applier.apply(raw)
        except Exception:
            # The journal (if any) restores the files at the next start; say so loudly now.
            log.exception("applying action %s failed unexpectedly", raw.get("action_id"))

    def _reported(self, report: dict[str, Any]) -> None:
        if report["step"] == "outcome" or report["step"] == "restore":
            self._refresh_wanted.set()

    def _stub_status_error(self) -> str | None:
        if self._sampler.stub_status.target is None:
            return None
        fragment = self._sampler.stub_status.collect()["stub_status"]
        return None if fragment["available"] else str(fragment["error"])

    def _build_option(self, name: str) -> str | None:
        build = self._sampler.facts_collector.build
        return build.option(name) if build is not None else None
