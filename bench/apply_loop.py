"""Apply loop: a recommended change from approval to `verified`, on real parts end to end.

The control plane (uvicorn, a temporary PostgreSQL database, Redis, a Celery worker that
analyses the pushed configs), a real nginx on a free loopback port and a real agent process
(`nginx-fleet-agent run`, allow_apply = true, the default 10 s push interval). Once the agent's
config is analysed, N times: an operator previews the fix of a finding (X-tokens and K-reset
in turn: POST /hosts/{id}/changes/preview), reads the diff for one to two push intervals
(uniform, seeded: the agent's next push has seen the preview, and approvals fall anywhere in its
cadence), then clicks "Approve and apply" (POST /hosts/{id}/changes and /changes/{id}/approve
at once), and the agent applies it; then, zero to one interval after `verified`, rolls it
back (POST /changes/{id}/rollback: one click, the click is the approval) so the config goes
back. From each change's events: approval →
`received` (the agent got the action in a push reply), `received` → `verified` (its applier,
mostly the verify watch) and approval → `verified`.

Actions ride push replies, so approval → `received` waits for the agent's next push. Two modes
in one run, same nginx, agent and database (the API restarts on the same port between them):
`hint`, the control plane's default (`next_push_s` while a change is in flight), and
`no hint` (NGINX_FLEET_CHANGE_PUSH_INTERVAL_S=0: the agent pushes at its interval only).
Exit code 1 when a change was not verified or nginx did not run the config it should.
Run: .venv/bin/python bench/apply_loop.py [--quick] [--count N] [--mode both|hint|no-hint]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from harness.agent_process import enroll, running_agent, write_agent_config
from harness.control_plane import (
    API,
    ControlPlane,
    backend_env,
    create_enrollment_token,
    logged_in_client,
    migrate,
    running_api,
    running_worker,
)
from harness.net import free_port
from harness.nginx_instance import NginxInstance, running_nginx
from harness.pgdb import temporary_database
from harness.processes import ManagedProcess, raise_sigterm_as_exit

TARGET_S = 10.0
# The control plane's default hint (NGINX_FLEET_CHANGE_PUSH_INTERVAL_S) and the agent's default
# verify watch (apply_verify_s).
DEFAULT_HINT_S = 2
DEFAULT_VERIFY_S = 3.0
# The fixes proposed in turn, and what each puts into the config (checked in the file).
FIXES = {"X-tokens": "server_tokens off;", "K-reset": "reset_timedout_connection on;"}
MODES = {"hint": DEFAULT_HINT_S, "no hint": 0}
FINISHED = {"verified", "rolled_back", "failed", "refused", "rejected", "superseded"}


@dataclass(frozen=True)
class Options:
    """Knobs of one run."""

    quick: bool
    count: int
    modes: tuple[str, ...]
    push_interval_s: int
    review_s: float | None
    verify_s: float
    seed: int


@dataclass(frozen=True)
class Timed:
    """One change from approval to its outcome, from its events (seconds)."""

    mode: str
    flow: str
    rule: str
    change_id: int
    to_received: float
    received_to_verified: float
    to_verified: float


def parse_options(argv: Sequence[str] | None) -> Options:
    """Command-line options; --quick makes 2 fixes (and their rollbacks) per mode instead of 6."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 fixes per mode instead of 6")
    parser.add_argument("--count", type=int, help="fixes per mode, each rolled back (6; quick 2)")
    parser.add_argument(
        "--mode", choices=("both", "hint", "no-hint"), default="both", help="(both)"
    )
    parser.add_argument(
        "--push-interval", type=int, default=10, help="the agent's push interval, s (10)"
    )
    parser.add_argument(
        "--review-s",
        type=float,
        help="fixed time between proposing and approving (default: 1-2 push intervals)",
    )
    parser.add_argument("--seed", type=int, default=8, help="of the operator's pauses (8)")
    parser.add_argument(
        "--verify-s", type=float, default=DEFAULT_VERIFY_S, help="agent's verify watch (3)"
    )
    args = parser.parse_args(argv)
    count = args.count if args.count is not None else (2 if args.quick else 6)
    if count < 1 or args.push_interval < 1 or args.verify_s <= 0:
        parser.error("--count, --push-interval and --verify-s must be positive")
    if args.review_s is not None and args.review_s < 0:
        parser.error("--review-s must be >= 0")
    modes = {"both": ("hint", "no hint"), "hint": ("hint",), "no-hint": ("no hint",)}[args.mode]
    return Options(
        quick=args.quick,
        count=count,
        modes=modes,
        push_interval_s=args.push_interval,
        review_s=args.review_s,
        verify_s=args.verify_s,
        seed=args.seed,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the loop in every mode, print the figures; exit 1 when a change went wrong."""
    options = parse_options(argv)
    raise_sigterm_as_exit()
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-loop-") as tmp,
        temporary_database() as database,
    ):
        return run(options, Path(tmp), database)


def run(options: Options, tmp: Path, database: str) -> int:
    """Start every part, run each mode, print the report."""
    env = backend_env(database=database, data_dir=tmp / "data", base=os.environ)
    env["NGINX_FLEET_PUSH_INTERVAL_S"] = str(options.push_interval_s)
    migrate(env=env)
    token = create_enrollment_token(env=env, max_uses=1)
    port = free_port()
    rng = random.Random(options.seed)
    timed: list[Timed] = []
    failures: list[str] = []
    with contextlib.ExitStack() as stack:
        nginx = stack.enter_context(running_nginx(tmp / "nginx"))
        stack.enter_context(running_worker(env=env, log_dir=tmp / "logs"))
        agent_config = tmp / "agent.toml"
        agent: ManagedProcess | None = None
        for mode in options.modes:
            mode_env = {**env, "NGINX_FLEET_CHANGE_PUSH_INTERVAL_S": str(MODES[mode])}
            with running_api(env=mode_env, workers=1, log_dir=tmp / "logs", port=port) as api:
                if agent is None:
                    write_agent_config(
                        agent_config,
                        server_url=api.base_url,
                        state_dir=tmp / "agent-state",
                        nginx=nginx,
                        push_interval_s=float(options.push_interval_s),
                        apply_verify_s=options.verify_s,
                    )
                    enroll(agent_config, server_url=api.base_url, token=token)
                    agent = stack.enter_context(
                        running_agent(agent_config, log_path=tmp / "logs" / "agent.log")
                    )
                with contextlib.closing(logged_in_client(api.base_url)) as client:
                    loop = Loop(options, client, api, nginx, agent, rng)
                    loop.wait_until_ready(since=datetime.now(UTC))
                    for index in range(options.count):
                        rule = list(FIXES)[index % len(FIXES)]
                        timed += loop.fix_and_roll_back(mode, rule, failures)
    print_report(options, timed, failures)
    return 1 if failures else 0


class Loop:
    """One mode's changes through the API, with the checks on nginx after each."""

    def __init__(
        self,
        options: Options,
        client: httpx.Client,
        api: ControlPlane,
        nginx: NginxInstance,
        agent: ManagedProcess,
        rng: random.Random,
    ) -> None:
        self.options, self.client, self.api, self.nginx, self.agent = (
            options,
            client,
            api,
            nginx,
            agent,
        )
        self.rng = rng
        self.host_id = 0

    def review_s(self) -> float:
        """The operator reads the diff: --review-s, else one to two push intervals."""
        if self.options.review_s is not None:
            return self.options.review_s
        return self.options.push_interval_s * (1 + self.rng.random())

    def wait_until_ready(self, since: datetime) -> None:
        """The agent pushed to this API (after `since`) and its current config is analysed."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            self._alive()
            hosts = self._get(f"{API}/fleet?q=bench-agent")["items"]
            seen = [h for h in hosts if h["hostname"] == "bench-agent" and h["last_seen_at"]]
            if seen and datetime.fromisoformat(seen[0]["last_seen_at"]) >= since:
                self.host_id = int(seen[0]["id"])
                config = self._get(f"{API}/hosts/{self.host_id}/config")
                if config["analysis"] is not None and self._fixable(config, "X-tokens"):
                    return
            time.sleep(0.2)
        raise RuntimeError(
            "the agent's config was not pushed and analysed within 120 s; agent log:\n"
            + self.agent.log_tail()
        )

    def fix_and_roll_back(self, mode: str, rule: str, failures: list[str]) -> list[Timed]:
        """Propose, review, approve the rule's fix; roll it back; both timed and checked."""
        config = self._get(f"{API}/hosts/{self.host_id}/config")
        original_hash = config["snapshot"]["hash"]
        original_text = self.nginx.config_file.read_bytes()
        finding = self._fixable(config, rule)
        if finding is None:
            failures.append(f"{mode}: no fixable {rule} finding in the host's latest analysis")
            return []
        # As in the UI: the operator previews the diff, reads it, then clicks "Approve and
        # apply" (propose and approve at once).
        keys = {"finding_keys": [finding["key"]]}
        self._post(f"{API}/hosts/{self.host_id}/changes/preview", keys, 200)
        time.sleep(self.review_s())
        created = self._post(
            f"{API}/hosts/{self.host_id}/changes", {**keys, "comment": "bench apply loop"}, 201
        )
        self._post(f"{API}/changes/{created['id']}/approve", {}, 200)
        fix = self._finished(created["id"], mode, "fix", rule, failures)
        if fix is None:
            return []
        added = FIXES[rule]
        if added not in self.nginx.config_file.read_text():
            failures.append(f"{mode}: change {created['id']} verified but {added!r} not written")
        if rule == "X-tokens" and self._server_header() != "nginx":
            failures.append(f"{mode}: nginx still names its version after X-tokens' fix")
        # The rollback's base is the fixed config: wait until the agent has pushed it.
        self._wait_config(lambda c: c["snapshot"]["hash"] != original_hash, "the fixed config")
        # The operator looks at the applied change for a moment, anywhere in the agent's cadence.
        time.sleep(self.options.push_interval_s * self.rng.random())
        reverse = self._post(f"{API}/changes/{created['id']}/rollback", {}, 201)
        rolled = self._finished(reverse["id"], mode, "rollback", rule, failures)
        if rolled is None:
            return [fix]
        if self.nginx.config_file.read_bytes() != original_text:
            failures.append(f"{mode}: rollback {reverse['id']} left the config file changed")
        if rule == "X-tokens" and not self._server_header().startswith("nginx/"):
            failures.append(f"{mode}: nginx hides its version after the rollback")
        self._wait_config(
            lambda c: c["snapshot"]["hash"] == original_hash and c["analysis"] is not None,
            "the restored config and its analysis",
        )
        return [fix, rolled]

    def _finished(
        self, change_id: int, mode: str, flow: str, rule: str, failures: list[str]
    ) -> Timed | None:
        """Wait for the change's outcome; its timings when verified, else a failure noted."""
        deadline = time.monotonic() + 3 * self.options.push_interval_s + 60
        detail: dict[str, Any] = {}
        while time.monotonic() < deadline:
            self._alive()
            detail = self._get(f"{API}/changes/{change_id}")
            if detail["status"] in FINISHED:
                break
            time.sleep(0.05)
        if detail.get("status") != "verified":
            failures.append(
                f"{mode}: {flow} change {change_id} ({rule}) is {detail.get('status')}: "
                f"{detail.get('outcome_message')}"
            )
            return None
        approved = _at(detail["approved_at"])
        received = _event_at(detail, "received")
        verified = _event_at(detail, "outcome")
        return Timed(
            mode=mode,
            flow=flow,
            rule=rule,
            change_id=change_id,
            to_received=received - approved,
            received_to_verified=verified - received,
            to_verified=verified - approved,
        )

    def _wait_config(self, done: Callable[[dict[str, Any]], bool], what: str) -> None:
        deadline = time.monotonic() + 3 * self.options.push_interval_s + 60
        while time.monotonic() < deadline:
            self._alive()
            config = self._get(f"{API}/hosts/{self.host_id}/config")
            if config["snapshot"] is not None and done(config):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the host did not report {what} in time")

    @staticmethod
    def _fixable(config: dict[str, Any], rule: str) -> dict[str, Any] | None:
        findings = (config.get("analysis") or {}).get("findings", [])
        return next(
            (f for f in findings if f["rule"] == rule and (f["fix"] or {}).get("action")), None
        )

    def _server_header(self) -> str:
        reply = httpx.get(f"http://127.0.0.1:{self.nginx.port}/", trust_env=False, timeout=5)
        return str(reply.headers.get("server", ""))

    def _alive(self) -> None:
        for process in (self.api.process, self.agent, self.nginx.process):
            if not process.alive():
                raise RuntimeError(
                    f"{process.name} exited; its log ends with:\n{process.log_tail()}"
                )

    def _get(self, path: str) -> Any:
        reply = self.client.get(path)
        if reply.status_code != 200:
            raise RuntimeError(f"GET {path}: HTTP {reply.status_code} {reply.text[:300]}")
        return reply.json()

    def _post(self, path: str, body: dict[str, Any], expected: int) -> Any:
        reply = self.client.post(path, json=body)
        if reply.status_code != expected:
            raise RuntimeError(f"POST {path}: HTTP {reply.status_code} {reply.text[:300]}")
        return reply.json()


def _at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _event_at(detail: dict[str, Any], step: str) -> float:
    """When the agent reported the step (the first report of it)."""
    return _at(next(e["at"] for e in detail["events"] if e["step"] == step))


def _figures(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} s {max(values):6.2f} s"


def _groups(timed: list[Timed]) -> Iterator[tuple[str, str, list[Timed]]]:
    for mode in MODES:
        for flow in ("fix", "rollback"):
            rows = [t for t in timed if t.mode == mode and t.flow == flow]
            if rows:
                yield mode, flow, rows


FLOW_NAMES = {
    "fix": "fix: previewed, then approve and apply",
    "rollback": "rollback: one click",
}


def print_report(options: Options, timed: list[Timed], failures: list[str]) -> None:
    """The setup, a table per mode and flow, the ratios and the target."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    review = (
        f"{options.review_s:g} s"
        if options.review_s is not None
        else "1-2 push intervals (uniform)"
    )
    print(f"nginx-fleet apply loop benchmark, {when}{' (--quick)' if options.quick else ''}")
    print(
        "setup: nginx 1.22.1 on 127.0.0.1; API (1 uvicorn worker) + Celery worker, PostgreSQL "
        f"and Redis on loopback; `nginx-fleet-agent run` with allow_apply, push interval "
        f"{options.push_interval_s} s, verify watch (apply_verify_s) {options.verify_s:g} s; "
        f"hint next_push_s {DEFAULT_HINT_S} s (NGINX_FLEET_CHANGE_PUSH_INTERVAL_S; 0 in "
        f"'no hint'); review before approval {review}; rollback clicked 0-1 push interval "
        f"after verified (seed {options.seed}); {options.count} fix(es) and their rollbacks "
        "per mode"
    )
    print(
        f"{'mode':<8} {'flow':<38} {'n':>2}  {'approval → received':>21}  "
        f"{'received → verified':>21}  {'approval → verified':>21}"
    )
    print(f"{'':<8} {'':<38} {'':>2}  " + "  ".join([f"{'median':>10} {'max':>10}"] * 3))
    for mode, flow, rows in _groups(timed):
        print(
            f"{mode:<8} {FLOW_NAMES[flow]:<38} {len(rows):>2}  "
            f"{_figures([r.to_received for r in rows])}  "
            f"{_figures([r.received_to_verified for r in rows])}  "
            f"{_figures([r.to_verified for r in rows])}"
        )
    by = {(mode, flow): rows for mode, flow, rows in _groups(timed)}
    hinted, plain = by.get(("hint", "fix")), by.get(("no hint", "fix"))
    if hinted and plain:
        figures: list[tuple[str, Callable[[Timed], float]]] = [
            ("approval → received", lambda r: r.to_received),
            ("approval → verified", lambda r: r.to_verified),
        ]
        for name, pick in figures:
            a, b = [pick(r) for r in plain], [pick(r) for r in hinted]
            print(
                f"ratio no hint / hint, fix, {name}: median "
                f"{statistics.median(a) / statistics.median(b):.2f}x, "
                f"max {max(a) / max(b):.2f}x"
            )
    if "rollback" in {flow for _mode, flow, _rows in _groups(timed)}:
        print(
            "rollback: one click, within 15 min of the fix's preview: the host still has the hint; "
            "later, or without it, approval → received is the wait for the agent's next push"
        )
    for mode, flow, rows in _groups(timed):
        worst = max(r.to_verified for r in rows)
        print(
            f"target approval → verified < {TARGET_S:g} s ({mode}, {FLOW_NAMES[flow]}): "
            f"{'met' if worst < TARGET_S else 'NOT MET'} (max {worst:.2f} s)"
        )
    for failure in failures:
        print(f"FAILED: {failure}")
    print("correctness:", "OK" if not failures else f"{len(failures)} problem(s)")


if __name__ == "__main__":
    sys.exit(main())
