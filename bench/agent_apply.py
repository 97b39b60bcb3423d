"""Agent apply: time from receiving an `apply` action to its outcome `verified`, real nginx.

Starts nginx on a free loopback port (own prefix, `-g "daemon off;"`), then applies N changes
in turn through the agent's applier (alternately adding and removing an `add_header` line),
each built like the control plane builds it (hashes of the redacted `nginx -T` sections).
Prints per-step times (received → check → backup → write → test → reload → verify → outcome)
and the total with the verify watch at its default (`apply_verify_s`), and checks after each
apply that nginx serves the new behaviour.
Run: .venv/bin/python bench/agent_apply.py [--quick] [--verify-s S]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from nginx_fleet_agent import defaults
from nginx_fleet_agent.apply.applier import Applier, ApplySettings, NginxProbes
from nginx_fleet_agent.apply.store import ActionStore
from nginx_fleet_agent.apply.textpatch import split_text
from nginx_fleet_agent.collectors.nginx_config import snapshot_from_dump
from nginx_fleet_agent.collectors.nginx_processes import read_pid_file
from nginx_fleet_agent.nginx_command import NginxCommand

from harness.nginx_instance import NGINX_BINARY, NginxInstance, running_nginx
from harness.processes import raise_sigterm_as_exit

HEADER_LINE = "            add_header X-Bench-Apply {n} always;"


def _action(nginx: NginxInstance, action_id: int) -> dict[str, Any]:
    """Add a header line after `location / {` (odd ids) or remove it again (even ids)."""
    raw = NginxCommand(NGINX_BINARY, ["-p", str(nginx.prefix), "-c", str(nginx.config_file)])
    text = split_text(snapshot_from_dump(raw.run("-T").stdout).dump)[str(nginx.config_file)]
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if "location / {" in line) + 1
    op: dict[str, Any]
    if action_id % 2:
        op = {"start": at + 1, "count": 0, "old": [], "new": [HEADER_LINE.format(n=action_id)]}
    else:
        op = {"start": at + 1, "count": 1, "old": [lines[at]], "new": []}
    new = lines[:at] + op["new"] + lines[at + op["count"] :]
    return {
        "type": "apply",
        "action_id": action_id,
        "files": [
            {
                "path": str(nginx.config_file),
                "base_sha256": hashlib.sha256(text.encode()).hexdigest(),
                "new_sha256": hashlib.sha256("\n".join(new).encode()).hexdigest(),
                "ops": [op],
            }
        ],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the applies and print the figures; exit 1 when one was not verified."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 applies instead of 10")
    parser.add_argument("--verify-s", type=float, default=defaults.APPLY_VERIFY_S)
    args = parser.parse_args(argv)
    raise_sigterm_as_exit()
    count = 4 if args.quick else 10
    with (
        tempfile.TemporaryDirectory(prefix="nf-bench-apply-") as tmp,
        running_nginx(Path(tmp) / "nginx") as nginx,
    ):
        return _run(nginx, Path(tmp) / "state", count, args.verify_s)


def _run(nginx: NginxInstance, state: Path, count: int, verify_s: float) -> int:
    marks: list[tuple[str, str, float]] = []
    store = ActionStore(state / "apply")
    applier = Applier(
        ApplySettings(state / "apply", NGINX_BINARY, verify_s, defaults.APPLY_TEST_TIMEOUT_S),
        store,
        NginxProbes(master_pid=lambda: read_pid_file(nginx.pid_file)),
        on_report=lambda r: marks.append((r["step"], r["status"], time.monotonic())),
    )
    totals, before_watch, replaced, failures = [], [], [], 0
    url = f"http://127.0.0.1:{nginx.port}/"
    for action_id in range(1, count + 1):
        action = _action(nginx, action_id)
        marks.clear()
        received = time.monotonic()
        status = applier.apply(action)
        total = time.monotonic() - received
        header = httpx.get(url, trust_env=False, timeout=5).headers.get("x-bench-apply")
        expected = str(action_id) if action_id % 2 else None
        if status != "verified" or header != expected:
            failures += 1
            print(f"action {action_id}: {status}, header {header!r} (expected {expected!r})")
            continue
        totals.append(total)
        watch = next(t for step, s, t in marks if (step, s) == ("verify", "started"))
        before_watch.append(watch - received)
        verify = next(r for r in store.pending(1000)[::-1] if r["step"] == "verify")
        replaced.append(float(verify["detail"]["workers_replaced_s"]))
    default = " (the default)" if verify_s == defaults.APPLY_VERIFY_S else ""
    print(f"nginx on loopback, {count} applies, verify watch {verify_s:g} s{default}")
    if totals:
        print(
            f"received → verified: median {statistics.median(totals):.3f} s, "
            f"min {min(totals):.3f} s, max {max(totals):.3f} s"
        )
        print(
            "received → reload sent (check, backup, write, nginx -t, SIGHUP): "
            f"median {statistics.median(before_watch) * 1000:.0f} ms, "
            f"max {max(before_watch) * 1000:.0f} ms"
        )
        print(
            "reload sent → every worker new: "
            f"median {statistics.median(replaced) * 1000:.0f} ms, max {max(replaced) * 1000:.0f} ms"
            " (the rest of the watch looks for emerg/alert/crit in the error log)"
        )
    print("correctness:", "OK" if not failures else f"{failures} apply(s) FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
