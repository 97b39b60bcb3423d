"""The command line, run as the installed console script."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_control_plane import ENROLLMENT_TOKEN, HOST_TOKEN, FakeControlPlane
from tests.nginx_instance import NginxInstance

SCRIPT = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "nginx-fleet-agent"


@pytest.fixture
def plane() -> Iterator[FakeControlPlane]:
    server = FakeControlPlane()
    server.start()
    yield server
    server.stop()


def _write_config(tmp_path: Path, nginx: NginxInstance, **extra: str) -> Path:
    lines = [
        f'state_dir = "{tmp_path / "state"}"',
        f"nginx_args = {json.dumps(nginx.args)}",
        'hostname = "cli-host"',
        *(f'{key} = "{value}"' for key, value in extra.items()),
        "[labels]",
        'env = "test"',
    ]
    path = tmp_path / "agent.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NGINX_FLEET_AGENT_")}
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_collect_once_prints_the_documented_payload(nginx: NginxInstance, tmp_path: Path) -> None:
    config = _write_config(tmp_path, nginx)
    result = _cli("--config", str(config), "collect", "--once", "--window", "0.2")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {
        "agent_id", "agent_version", "hostname", "labels", "facts", "config", "config_hash",
        "samples",
    }  # fmt: skip
    assert payload["agent_id"] == "unenrolled"
    assert payload["hostname"] == "cli-host"
    assert payload["labels"] == {"env": "test"}
    assert payload["facts"]["nginx_version"] == "1.22.1"
    assert payload["facts"]["nginx_openssl_version"].startswith("3.")
    assert "http_stub_status_module" in payload["facts"]["nginx_modules"]
    assert payload["config"]["dump"].startswith("# configuration file ")
    (sample,) = payload["samples"]
    assert set(sample) == {
        "seq", "ts", "nginx", "stub_status", "system", "nginx_processes", "access_log",
        "error_log",
    }  # fmt: skip
    assert sample["seq"] == 1
    (log_file,) = sample["access_log"]["files"]
    assert log_file["path"] == f"{nginx.prefix}/logs/access.log"
    assert (log_file["formats"], log_file["state"]) == (["combined"], "ok")
    # nginx's combined format has neither timings nor the cache status.
    assert {"request_time", "upstream_cache_status"} <= set(log_file["missing_fields"])
    assert sample["ts"].endswith("Z")
    assert sample["nginx"]["workers"] == 2
    assert sample["stub_status"]["url"] == f"{nginx.base_url}/nginx_status"
    assert sample["stub_status"]["requests"] >= 1
    assert set(sample["system"]) == {
        "cpu", "memory", "load", "network", "tcp_states", "netstat",
    }  # fmt: skip
    assert set(sample["nginx_processes"]) == {
        "fds_open", "fds_limit", "rss_bytes", "cpu_pct", "worker_cpu_pct", "worker_fds_max",
        "worker_fds_limit",
    }  # fmt: skip
    # Printing must not create any state.
    assert not (tmp_path / "state").exists()


def test_collect_once_with_nginx_down(nginx: NginxInstance, tmp_path: Path) -> None:
    config = _write_config(tmp_path, nginx)
    nginx.stop()
    result = _cli("--config", str(config), "collect", "--once", "--window", "0")
    assert result.returncode == 0, result.stderr
    (sample,) = json.loads(result.stdout)["samples"]
    assert sample["nginx"]["up"] is False
    assert sample["nginx"]["error"]
    assert sample["nginx_processes"] is None
    assert sample["stub_status"] == {
        "available": False,
        "url": None,
        "error": "nginx is not running",
    }
    assert sample["system"]["memory"]["total_bytes"] > 0
    assert sample["system"]["cpu"]["per_core_pct"]


def test_enroll_then_check(nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path) -> None:
    config = _write_config(tmp_path, nginx)
    enrolled = _cli(
        "--config", str(config), "enroll", "--server", plane.url + "/",
        "--token", ENROLLMENT_TOKEN, "--label", "role=edge",
    )  # fmt: skip
    assert enrolled.returncode == 0, enrolled.stderr
    assert "enrolled as host 7" in enrolled.stdout
    request = plane.requests[0].body
    assert request["enrollment_token"] == ENROLLMENT_TOKEN
    assert request["hostname"] == "cli-host"
    assert request["labels"] == {"env": "test", "role": "edge"}
    state_file = tmp_path / "state" / "state.json"
    assert stat.S_IMODE(state_file.stat().st_mode) == 0o600
    state = json.loads(state_file.read_text())
    assert state == {
        "agent_id": request["agent_id"],
        "host_id": 7,
        "host_token": HOST_TOKEN,
        "server": plane.url,
    }
    checked = _cli("--config", str(config), "check")
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["ok"] is True


def test_enroll_with_a_bad_token_fails_clearly(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    config = _write_config(tmp_path, nginx)
    result = _cli("--config", str(config), "enroll", "--server", plane.url, "--token", "nfe_bad")
    assert result.returncode == 1
    assert "HTTP 401: unknown or expired enrolment token" in result.stderr
    assert not (tmp_path / "state" / "state.json").exists()


def test_commands_needing_enrolment_say_so(nginx: NginxInstance, tmp_path: Path) -> None:
    config = _write_config(tmp_path, nginx)
    for command in ("check", "run"):
        result = _cli("--config", str(config), command)
        assert result.returncode == 1
        assert "enrol first" in result.stderr


def test_unreachable_server_fails_clearly(nginx: NginxInstance, tmp_path: Path) -> None:
    config = _write_config(tmp_path, nginx)
    plane = FakeControlPlane()  # never started: connection refused
    result = _cli("--config", str(config), "enroll", "--server", plane.url, "--token", "x")
    assert result.returncode == 1
    assert "cannot connect" in result.stderr


def test_bad_config_fails_clearly(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    path.write_text("push_interval_s = 'soon'\n")
    result = _cli("--config", str(path), "collect", "--once")
    assert result.returncode == 1
    assert "push_interval_s: expected a number" in result.stderr


def test_run_pushes_and_stops_on_sigterm(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    plane.push_interval_s = 1
    config = _write_config(tmp_path, nginx)
    assert _cli(
        "--config", str(config), "enroll", "--server", plane.url, "--token", ENROLLMENT_TOKEN
    ).returncode == 0  # fmt: skip
    process = subprocess.Popen(
        [str(SCRIPT), "--config", str(config), "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 10
        while len(plane.seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.kill(process.pid, signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0, stderr
    assert len(plane.seen) >= 2
    assert "received SIGTERM, stopping" in stderr


def test_reenrolling_proves_the_host_with_its_current_token(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    config = _write_config(tmp_path, nginx)
    enroll = ("--config", str(config), "enroll", "--token", ENROLLMENT_TOKEN, "--server")
    assert _cli(*enroll, plane.url).returncode == 0
    assert "authorization" not in plane.requests[0].headers
    assert _cli(*enroll, plane.url).returncode == 0
    again = plane.requests[1]
    assert again.headers["authorization"] == f"Bearer {HOST_TOKEN}"
    assert again.body["agent_id"] == plane.requests[0].body["agent_id"]


def test_reenrolling_elsewhere_never_sends_the_token(
    nginx: NginxInstance, plane: FakeControlPlane, tmp_path: Path
) -> None:
    config = _write_config(tmp_path, nginx)
    enroll = ("--config", str(config), "enroll", "--token", ENROLLMENT_TOKEN, "--server")
    assert _cli(*enroll, plane.url).returncode == 0
    other = FakeControlPlane()
    other.start()
    try:
        assert _cli(*enroll, other.url).returncode == 0
    finally:
        other.stop()
    assert "authorization" not in other.requests[0].headers
