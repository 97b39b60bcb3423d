"""Building apply actions the way the control plane does, and appliers watching a test nginx."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from nginx_fleet_agent.apply.applier import Applier, ApplySettings, NginxProbes
from nginx_fleet_agent.apply.store import ActionStore
from nginx_fleet_agent.collectors.nginx_config import snapshot_from_dump
from nginx_fleet_agent.collectors.nginx_processes import read_pid_file
from nginx_fleet_agent.collectors.stub_status import StubStatusCollector
from nginx_fleet_agent.nginx_command import NginxCommand

from tests.nginx_instance import NGINX, NginxInstance

_HEADER = re.compile(r"^# configuration file (.+):$", re.MULTILINE)


def dumped_texts(instance: NginxInstance) -> dict[str, str]:
    """Each file's text in the redacted dump the agent sends (docs/changes.md's split rule).

    Written here again on purpose, from the contract: it checks the agent's own reading."""
    dump = snapshot_from_dump(NginxCommand(NGINX, instance.args).run("-T").stdout).dump
    headers = list(_HEADER.finditer(dump))
    texts: dict[str, str] = {}
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(dump)
        body = dump[header.end() + 1 : end]
        texts.setdefault(header.group(1), body[:-1] if body.endswith("\n") else body)
    return texts


def sha256(text: str) -> str:
    """SHA-256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode()).hexdigest()


def patched(text: str, ops: list[dict[str, Any]]) -> str:
    """The text with line ops applied (the control plane's model: split on "\\n")."""
    lines = text.split("\n")
    for op in sorted(ops, key=lambda o: o["start"], reverse=True):
        lines[op["start"] - 1 : op["start"] - 1 + op["count"]] = op["new"]
    return "\n".join(lines)


def line_no(text: str, needle: str) -> int:
    """1-based number of the first line containing `needle`."""
    for number, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


def insert_after(text: str, needle: str, new: list[str]) -> list[dict[str, Any]]:
    """Ops inserting `new` lines after the line containing `needle`."""
    return [{"start": line_no(text, needle) + 1, "count": 0, "old": [], "new": new}]


def make_action(
    instance: NginxInstance,
    path: Path,
    ops_for: Any,
    action_id: int = 1,
) -> dict[str, Any]:
    """An `apply` action for one file; `ops_for(text)` gives its ops from the dumped text."""
    text = dumped_texts(instance)[str(path)]
    ops = ops_for(text)
    return {
        "type": "apply",
        "action_id": action_id,
        "change_id": action_id,
        "kind": "fix",
        "files": [
            {
                "path": str(path),
                "base_sha256": sha256(text),
                "new_sha256": sha256(patched(text, ops)),
                "ops": ops,
            }
        ],
    }


def site_conf(instance: NginxInstance) -> Path:
    """The server's file of a test instance."""
    return instance.prefix / "conf" / "conf.d" / "site.conf"


def make_applier(
    instance: NginxInstance, state_dir: Path, verify_s: float = 1.0
) -> tuple[Applier, ActionStore]:
    """An applier (and its store) for `instance`, checking its stub_status after reloads."""
    apply_dir = state_dir / "apply"
    store = ActionStore(apply_dir)
    stub = StubStatusCollector(f"{instance.base_url}/nginx_status")

    def stub_status_error() -> str | None:
        fragment = stub.collect()["stub_status"]
        return None if fragment["available"] else str(fragment["error"])

    applier = Applier(
        ApplySettings(
            apply_dir=apply_dir, nginx_binary=NGINX, verify_s=verify_s, test_timeout_s=20
        ),
        store,
        NginxProbes(
            master_pid=lambda: read_pid_file(instance.pid_file),
            stub_status_error=stub_status_error,
        ),
    )
    return applier, store


def steps(store: ActionStore) -> list[tuple[str, str]]:
    """(step, status) of every spooled report, in order."""
    return [(r["step"], r["status"]) for r in store.pending(1000)]


def outcome(store: ActionStore) -> dict[str, Any]:
    """The last spooled report, which must be the outcome."""
    last = store.pending(1000)[-1]
    assert last["step"] == "outcome", last
    return last
