"""The launcher end to end: dashboard, three nginx with agents, ready file, and a clean Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from nginx_instances import DEMO_DIR, INSTANCES, free_port

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


def test_demo_comes_up_and_stops_everything_on_ctrl_c(nginx_root: Path) -> None:
    ready_file = nginx_root / "ready.json"
    log = nginx_root / "launcher.log"
    argv = [
        sys.executable,
        str(DEMO_DIR / "run_demo.py"),
        "--port",
        str(free_port()),
        "--data-dir",
        str(nginx_root / "data"),
        "--push-interval",
        "1",
        "--traffic-seconds",
        "120",
        "--ready-file",
        str(ready_file),
    ]
    with log.open("wb") as output:
        launcher = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT)
    try:
        ready = wait_for_ready_file(launcher, ready_file, log)
        assert ready["hosts"] == [spec.name for spec in INSTANCES]
        url = str(ready["url"])
        with httpx.Client(base_url=f"{url}/api/v1") as client:
            login = {"username": ready["username"], "password": ready["password"]}
            assert client.post("/auth/login", json=login).status_code == 200
            fleet = client.get("/fleet").json()
        assert {host["hostname"]: host["status"] for host in fleet} == {
            spec.name: "up" for spec in INSTANCES
        }
        started = descendants(launcher.pid)
        # backend + worker, upstream, 3 nginx masters with workers, 3 agents, traffic
        assert len(started) >= 10

        launcher.send_signal(signal.SIGINT)
        assert launcher.wait(timeout=90) == 0
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()

    assert [pid for pid in started if alive(pid)] == []
    assert "nothing it started is left running" in log.read_text()
    assert not ready_file.with_name("ready.json.tmp").exists()
