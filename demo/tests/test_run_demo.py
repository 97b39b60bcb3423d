"""The launcher end to end: dashboard, the nginx with agents, ready file, and a clean Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from children import session_members
from nginx_instances import DEMO_DIR, INSTANCES, free_port
from stop_demo import stop_demo

READY_TIMEOUT_S = 180.0


def descendants(pid: int) -> set[int]:
    """Every live process below pid, found through the parent links in /proc."""
    parents: dict[int, int] = {}
    for stat_path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_path.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(stat_path.parent.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """Whether pid exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for_ready_file(
    launcher: subprocess.Popen[bytes], ready_file: Path, log: Path
) -> dict[str, object]:
    """The launcher's ready file, or a failure that shows its output."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        assert launcher.poll() is None, f"the demo exited early:\n{log.read_text()[-3000:]}"
        if ready_file.exists():
            content: dict[str, object] = json.loads(ready_file.read_text())
            return content
        time.sleep(0.5)
    raise AssertionError(f"no ready file after {READY_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


def launcher_argv(root: Path, *extra: str) -> list[str]:
    """run_demo.py with short pushes, bounded traffic, and its data and ready file under root."""
    return [
        sys.executable,
        str(DEMO_DIR / "run_demo.py"),
        "--port",
        str(free_port()),
        "--data-dir",
        str(root / "data"),
        "--push-interval",
        "1",
        "--traffic-seconds",
        "120",
        "--ready-file",
        str(root / "ready.json"),
        *extra,
    ]


def start_launcher(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    """Start the launcher as the e2e setup does: leading a session of its own."""
    with log.open("wb") as output:
        return subprocess.Popen(
            argv, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )


@pytest.fixture
def launchers() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Launchers a test starts; whatever is left of their sessions is killed afterwards."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for launcher in started:
        stop_demo(launcher.pid, timeout_s=90)
        launcher.wait(timeout=10)


def test_demo_comes_up_and_stops_everything_on_ctrl_c(
    nginx_root: Path, launchers: list[subprocess.Popen[bytes]]
) -> None:
    ready_file = nginx_root / "ready.json"
    log = nginx_root / "launcher.log"
    launcher = start_launcher(launcher_argv(nginx_root), log)
    launchers.append(launcher)
    ready = wait_for_ready_file(launcher, ready_file, log)
    assert ready["hosts"] == [spec.name for spec in INSTANCES]
    url = str(ready["url"])
    with httpx.Client(base_url=f"{url}/api/v1") as client:
        login = {"username": ready["username"], "password": ready["password"]}
        assert client.post("/auth/login", json=login).status_code == 200
        fleet = client.get("/fleet").json()["items"]
    assert {host["hostname"]: host["status"] for host in fleet} == {
        spec.name: "up" for spec in INSTANCES
    }
    started = descendants(launcher.pid)
    # backend + worker, upstream, 4 nginx masters with workers, 4 agents, traffic
    assert len(started) >= 10

    # An impatient person presses Ctrl-C again and again (or `timeout` passes on a TERM
    # while the shell sends its own): the clean-up still runs to its end.
    flood_until = time.monotonic() + 1.0
    while launcher.poll() is None and time.monotonic() < flood_until:
        launcher.send_signal(signal.SIGINT)
    assert launcher.wait(timeout=90) == 0

    assert [pid for pid in started if alive(pid)] == []
    assert session_members(launcher.pid) == []
    assert "nothing it started is left running" in log.read_text()
    assert not ready_file.with_name("ready.json.tmp").exists()


def test_a_killed_launcher_leaves_nothing_once_its_session_is_stopped(
    nginx_root: Path, launchers: list[subprocess.Popen[bytes]]
) -> None:
    log = nginx_root / "launcher.log"
    launcher = start_launcher(launcher_argv(nginx_root), log)
    launchers.append(launcher)
    wait_for_ready_file(launcher, nginx_root / "ready.json", log)
    started = descendants(launcher.pid)
    assert len(started) >= 10

    # SIGKILL: the launcher gets no chance to stop its children (a crashed or killed test run).
    launcher.kill()
    launcher.wait(timeout=10)
    orphans = [pid for pid in started if alive(pid)]
    assert orphans, "the children outlive a killed launcher; the session sweep is what stops them"

    killed = stop_demo(launcher.pid, timeout_s=10)

    assert len(killed) == len(orphans)
    assert [pid for pid in started if alive(pid)] == []
    assert session_members(launcher.pid) == []


# Stands in for nginx: leaves a helper behind, then fails, like a master whose workers linger.
FAILING_NGINX = """#!/bin/sh
sleep 600 &
echo "$!" >> "$(dirname "$0")/helpers.pid"
exit 1
"""


def test_a_launcher_failing_half_way_stops_what_it_had_started(
    nginx_root: Path, launchers: list[subprocess.Popen[bytes]]
) -> None:
    fake_nginx = nginx_root / "nginx"
    fake_nginx.write_text(FAILING_NGINX)
    fake_nginx.chmod(0o755)
    log = nginx_root / "launcher.log"
    launcher = start_launcher(launcher_argv(nginx_root, "--nginx", str(fake_nginx)), log)
    launchers.append(launcher)
    seen: set[int] = set()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while launcher.poll() is None and time.monotonic() < deadline:
        seen |= descendants(launcher.pid)
        time.sleep(0.2)

    assert launcher.wait(timeout=90) == 1
    output = log.read_text()
    assert "demo failed: demo-default did not start" in output
    assert "nothing it started is left running" in output
    # The helper was orphaned when the fake nginx exited: only its process group still reached it.
    helpers = [int(pid) for pid in (nginx_root / "helpers.pid").read_text().split()]
    assert helpers
    assert len(seen) >= 3  # the server and its worker, the upstream app, the fake nginx
    assert [pid for pid in [*seen, *helpers] if alive(pid)] == []
    assert session_members(launcher.pid) == []
