"""The agent loop: sample every interval into the spool, push the spool oldest first."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from typing import Any

from nginx_fleet_agent import defaults
from nginx_fleet_agent.apply.runner import ApplyRunner
from nginx_fleet_agent.backoff import Backoff
from nginx_fleet_agent.config import AgentConfig
from nginx_fleet_agent.payload import build_payload
from nginx_fleet_agent.sampler import Sampler
from nginx_fleet_agent.spool import Spool
from nginx_fleet_agent.state import AgentState
from nginx_fleet_agent.transport import Outcome, PushResult, Transport, make_verify

log = logging.getLogger(__name__)

ACKED_CONFIG_HASH = "acked_config_hash"
# How often the loop looks for new step reports while an apply runs.
APPLY_POLL_S = 0.05


class Agent:
    """Runs until `stop_event` is set; collection never waits for the network."""

    def __init__(
        self,
        config: AgentConfig,
        state: AgentState,
        *,
        sampler: Sampler | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self._config = config
        self._state = state
        self._spool = Spool(config.spool_file, config.spool_max_samples, config.spool_max_bytes)
        self._transport = Transport(
            config.server_url or state.server,
            timeout_s=config.request_timeout_s,
            verify=make_verify(config.tls_verify, config.ca_file),
            token=state.host_token,
        )
        self._sampler = sampler or Sampler(config)
        if self._sampler.access_logs is not None:
            saved = self._spool.get_meta(defaults.ACCESS_LOG_POSITIONS_KEY)
            self._sampler.access_logs.restore(json.loads(saved) if saved else {})
        if self._sampler.error_logs is not None:
            saved = self._spool.get_meta(defaults.ERROR_LOG_POSITIONS_KEY)
            self._sampler.error_logs.restore(json.loads(saved) if saved else {})
        self._backoff = backoff or Backoff(cap_s=config.backoff_cap_s)
        self.stop_event = threading.Event()
        self.interval_s = config.push_interval_s
        self.push_stopped = False
        # Backoff: no push before this (monotonic) after a failed one.
        self._next_push_at = 0.0
        # The server asked for the next push sooner (`next_push_s`: a change is in flight):
        # when it is due, with nothing new to send, and the wait it asked for.
        self._hinted_push_at: float | None = None
        self._hinted_wait_s: float | None = None
        self._max_batch = defaults.MAX_SAMPLES_PER_PUSH
        self._sent_facts: dict[str, Any] | None = None
        self._oversized_config_hash: str | None = None
        self.apply = ApplyRunner(config, self._sampler)
        # The last delivered sample: re-sent (the server counts it as a duplicate) to carry
        # step reports when no new sample waits, so a step reaches the UI at once without
        # a burst of extra samples.
        self._last_delivered: dict[str, Any] | None = None

    def run(self) -> None:
        """Collect and push until stopped, then close everything."""
        log.info(
            "agent %s pushing to %s every %g s",
            self._state.agent_id,
            self._config.server_url or self._state.server,
            self.interval_s,
        )
        try:
            self.apply.recover()
            last_collect = next_collect = time.monotonic()
            while not self.stop_event.is_set():
                now = time.monotonic()
                if now >= next_collect:
                    self.collect_once()
                    last_collect = now
                if self._push_due():
                    self.push_pending()
                # The interval may have just changed (server reply); after a stall (suspend,
                # slow disk) resume the cadence instead of bursting to catch up.
                next_collect = last_collect + self.interval_s
                wake = next_collect
                push_at = self._next_push_time()
                if push_at is not None:
                    wake = min(wake, push_at)
                if self.apply.busy:
                    # Each step report is pushed as soon as it is spooled.
                    wake = min(wake, time.monotonic() + APPLY_POLL_S)
                self.stop_event.wait(max(0.0, wake - time.monotonic()))
            log.info("agent stopping; %d sample(s) left in the spool", self.spooled)
        finally:
            self.close()

    @property
    def spooled(self) -> int:
        """Samples waiting in the spool."""
        return len(self._spool)

    def collect_once(self) -> int | None:
        """Take one sample into the spool; return its seq (None when sampling failed)."""
        try:
            sample = self._sampler.sample()
        except Exception:
            # A collector bug must not kill the agent: the next interval tries again.
            log.exception("taking a sample failed")
            return None
        # Stored in the sample's own transaction: a restart resumes the logs where it ended.
        meta = {
            defaults.ACCESS_LOG_POSITIONS_KEY: _compact(self._sampler.access_log_positions()),
            defaults.ERROR_LOG_POSITIONS_KEY: _compact(self._sampler.error_log_positions()),
        }
        return self._spool.append(sample, meta=meta)

    def push_pending(self) -> None:
        """Push spooled samples in batches until the spool is empty or a push fails.

        With nothing spooled, a push still goes out for step reports, or when the server asked
        for one sooner (`next_push_s`) and it is due: it re-sends the last delivered sample."""
        while not self.push_stopped:
            batch = self._spool.oldest(self._max_batch)
            reports = self.apply.store.pending(defaults.MAX_ACTION_REPORTS_PER_PUSH)
            if not batch:
                self._max_batch = defaults.MAX_SAMPLES_PER_PUSH
                if not reports and not self._hinted_push_due():
                    return
                batch = self._report_carrier()
                if not batch:
                    return
            # A hint holds for one wait: the reply to this push says whether it still does.
            self._hinted_push_at = None
            # A change was applied or rolled back: the push carries the config as it is now.
            # The reports in hand decide too: an outcome stored just before its refresh flag
            # is set must not reach the control plane ahead of the config it left behind.
            settled = any(r["step"] in ("outcome", "restore") for r in reports)
            if self.apply.take_refresh() or settled:
                self._sampler.refresh_config()
            snapshot = self._sampler.config
            send_dump = (
                snapshot is not None
                and snapshot.hash != self._spool.get_meta(ACKED_CONFIG_HASH)
                and snapshot.hash != self._oversized_config_hash
            )
            facts = self._sampler.facts if self._sampler.facts != self._sent_facts else None
            gaps = self._spool.gaps(defaults.MAX_GAPS_PER_PUSH)
            payload = build_payload(
                agent_id=self._state.agent_id,
                hostname=self._sampler.hostname,
                labels=self._config.labels,
                samples=batch,
                facts=facts,
                config=snapshot,
                include_config_dump=send_dump,
                gaps=gaps,
                action_reports=reports,
            )
            result = self._transport.push(payload)
            if result.outcome is Outcome.DELIVERED:
                self.apply.store.confirm(reports)
                self._delivered(
                    batch, result, facts, snapshot.hash if send_dump and snapshot else None
                )
                self._spool.remove_gaps(gaps)
            elif not self._handle_failure(batch, result, sent_dump=send_dump):
                return

    def recover_applies(self) -> None:
        """Restore changes an earlier run left half applied (`run` does it first)."""
        self.apply.recover()

    def close(self) -> None:
        """Close the spool and connections (after letting a running apply finish)."""
        self.apply.join(timeout=defaults.APPLY_TEST_TIMEOUT_S + self._config.apply_verify_s * 3)
        self._transport.close()
        self._sampler.close()
        self._spool.close()

    def _next_push_time(self) -> float | None:
        """When the loop should push next (monotonic clock), or None when nothing waits.

        Spooled samples and step reports go as soon as any backoff allows; a push the server
        asked for sooner goes when due, and never before a backoff ends (its jitter kept)."""
        if self.push_stopped:
            return None
        if len(self._spool) > 0 or self.apply.store.has_pending():
            return self._next_push_at
        if self._hinted_push_at is not None:
            return max(self._hinted_push_at, self._next_push_at)
        return None

    def _hinted_push_due(self) -> bool:
        return self._hinted_push_at is not None and time.monotonic() >= self._hinted_push_at

    def _report_carrier(self) -> list[dict[str, Any]]:
        """A sample to carry step reports when the spool is empty (pushes need one)."""
        if self._last_delivered is not None:
            return [self._last_delivered]
        self.collect_once()
        return self._spool.oldest(1)

    def _push_due(self) -> bool:
        push_at = self._next_push_time()
        return push_at is not None and time.monotonic() >= push_at

    def _delivered(
        self,
        batch: list[dict[str, Any]],
        result: PushResult,
        facts: dict[str, Any] | None,
        dump_hash: str | None,
    ) -> None:
        # Stored, duplicates and samples refused alone all leave the spool: resending a refused
        # sample cannot make it valid, and the good ones of the batch are stored.
        self._spool.remove_through(batch[-1]["seq"])
        self._last_delivered = batch[-1]
        if self._backoff.failures:
            log.info("push succeeded again after %d failure(s)", self._backoff.failures)
        self._backoff.reset()
        if facts is not None:
            self._sent_facts = facts
        if dump_hash is not None:
            self._spool.set_meta(ACKED_CONFIG_HASH, dump_hash)
        reply = result.reply or {}
        _log_refusals(reply.get("rejected"))
        if reply.get("config_wanted"):
            self._spool.set_meta(ACKED_CONFIG_HASH, None)
        interval = reply.get("push_interval_s")
        if isinstance(interval, int | float) and interval != self.interval_s:
            self.interval_s = max(float(interval), defaults.MIN_PUSH_INTERVAL_S)
            log.info("server set the push interval to %g s", self.interval_s)
        self._follow_hint(reply.get("next_push_s"))
        if reply.get("actions"):
            self.apply.submit(reply["actions"])

    def _follow_hint(self, value: object) -> None:
        """Schedule the next push as the reply's `next_push_s` asks, or go back to the interval."""
        wait = hinted_wait_s(value, self.interval_s)
        if wait != self._hinted_wait_s:
            if wait is not None:
                log.info("a change is in flight: pushing every %g s until it is over", wait)
            else:
                log.info("no change in flight: pushing every %g s again", self.interval_s)
            self._hinted_wait_s = wait
        self._hinted_push_at = time.monotonic() + wait if wait is not None else None

    def _handle_failure(
        self, batch: list[dict[str, Any]], result: PushResult, *, sent_dump: bool
    ) -> bool:
        """React to a failed push; True when the loop should try the next push at once."""
        first, last = batch[0]["seq"], batch[-1]["seq"]
        if result.outcome is Outcome.STOP:
            log.critical(
                "push refused (%s): the host token is not valid for this host. Pushing stops "
                "until the agent is re-enrolled and restarted; samples stay spooled.",
                result.detail,
            )
            self.push_stopped = True
            return False
        if result.outcome is Outcome.DROP:
            return self._drop_or_shrink(batch, result, sent_dump=sent_dump)
        delay = result.retry_after_s or self._backoff.next_delay()
        self._next_push_at = time.monotonic() + delay
        level = logging.WARNING if result.outcome is Outcome.RETRY else logging.ERROR
        log.log(
            level,
            "push of seq %d..%d failed: %s; %d sample(s) spooled, next try in %.1f s",
            first,
            last,
            result.detail,
            len(self._spool),
            delay,
        )
        return False

    def _drop_or_shrink(
        self, batch: list[dict[str, Any]], result: PushResult, *, sent_dump: bool
    ) -> bool:
        """On 413 try without the dump, then smaller batches; drop only a sample too large alone."""
        if result.status == 413 and sent_dump and self._sampler.config is not None:
            self._oversized_config_hash = self._sampler.config.hash
            log.error(
                "config dump too large for the server (%s); sending metrics without it",
                result.detail,
            )
            return True
        if result.status == 413 and len(batch) > 1:
            self._max_batch = max(1, len(batch) // 2)
            log.warning(
                "push too large (%s); retrying with batches of %d", result.detail, self._max_batch
            )
            return True
        log.error(
            "server rejected seq %d..%d (%s); dropping these %d sample(s)",
            batch[0]["seq"],
            batch[-1]["seq"],
            result.detail,
            len(batch),
        )
        self._spool.remove_through(batch[-1]["seq"])
        return True


def hinted_wait_s(value: object, interval_s: float) -> float | None:
    """The wait before the next push a reply's `next_push_s` asks for; None to ignore it.

    Only a finite number above zero and below the agent's own interval counts, and never
    below MIN_PUSH_INTERVAL_S: a bad or hostile reply can neither make the agent hammer the
    server nor make it push less often."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value <= 0 or value >= interval_s:
        return None
    return max(float(value), defaults.MIN_PUSH_INTERVAL_S)


def _compact(value: dict[str, Any]) -> str:
    """`value` as JSON without spaces, for the spool's meta table."""
    return json.dumps(value, separators=(",", ":"))


def _log_refusals(rejected: object) -> None:
    """Log the samples (and gap records) the server refused alone, naming seq, field and why."""
    if not isinstance(rejected, list) or not rejected:
        return
    for refusal in rejected[: defaults.MAX_LOGGED_REFUSALS]:
        if isinstance(refusal, dict):
            log.warning(
                "server refused %s: %s",
                f"sample seq {refusal.get('seq')}"
                if refusal.get("seq") is not None
                else refusal.get("field", "an item"),
                refusal.get("reason", "no reason given"),
            )
    if len(rejected) > defaults.MAX_LOGGED_REFUSALS:
        log.warning(
            "server refused %d more sample(s) of this push",
            len(rejected) - defaults.MAX_LOGGED_REFUSALS,
        )
