"""Error-log counts from a real nginx: real drops, rotation while nginx writes, syslog targets."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from nginx_fleet_agent.collectors.stub_status import parse_stub_status
from nginx_fleet_agent.sampler import Sampler

from tests.conftest import agent_config_for
from tests.error_traffic import (
    HangingUpstream,
    error_server,
    held_connections,
    request_missing,
    wait_for_status,
)
from tests.nginx_instance import NginxInstance


@pytest.fixture
def hanging() -> Iterator[HangingUpstream]:
    upstream = HangingUpstream()
    yield upstream
    upstream.close()


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory nginx's workers (nobody, when the tests run as root) may enter, so that
    they can reopen their logs after a rotation; root's pytest tmp_path is 0700."""
    path = Path(tempfile.mkdtemp(prefix="nginx-fleet-errlog-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def sampler_for(nginx: NginxInstance, state_dir: Path, **overrides: Any) -> Sampler:
    """A sampler watching `nginx` that finishes with a renamed log at once."""
    overrides.setdefault("access_log_rotate_wait_s", 0.0)
    return Sampler(agent_config_for(nginx, state_dir, **overrides))


def error_count(samples: list[dict[str, Any]], level: str = "error") -> int:
    return sum(s["error_log"]["levels"][level] for s in samples)


def test_real_drops_are_counted_as_worker_connections_not_enough(
    nginx_factory: Callable[..., NginxInstance], hanging: HangingUpstream, tmp_path: Path
) -> None:
    # One worker with 16 connections: two go to the listener and the master's channel, each
    # held request takes two (client and upstream), so the 60 held connections overflow it.
    nginx = nginx_factory(error_server(hanging.port), workers=1, connections=16)
    sampler = sampler_for(nginx, tmp_path / "state")
    before = sampler.sample()  # opens the error log at its end
    assert before["error_log"]["files"] == [
        {"path": str(nginx.prefix / "logs" / "error.log"), "readable": True, "error": None}
    ]
    with held_connections(nginx.port, 60):
        pass
    status = parse_stub_status(wait_for_status(nginx.base_url))
    after = sampler.sample()
    sampler.close()

    assert status["accepts"] > status["handled"]
    assert after["stub_status"]["accepts"] > after["stub_status"]["handled"]
    error_log = after["error_log"]
    assert error_log["levels"]["alert"] > 0
    assert error_log["messages"]["worker_connections_not_enough"] > 0
    # One alert per connection nginx accepted and could not handle: the same number.
    dropped = (after["stub_status"]["accepts"] - after["stub_status"]["handled"]) - (
        before["stub_status"]["accepts"] - before["stub_status"]["handled"]
    )
    assert error_log["messages"]["worker_connections_not_enough"] == dropped
    assert error_log["messages"]["too_many_open_files"] == 0
    # Nothing of a line is in the sample: only numbers and the file list.
    assert set(error_log) == {"files", "lines", "levels", "messages"}


@pytest.mark.parametrize("rotation", ["rename", "copytruncate"])
def test_a_rotation_while_nginx_writes_loses_and_repeats_no_count(
    shared_dir: Path, tmp_path: Path, hanging: HangingUpstream, rotation: str
) -> None:
    nginx = NginxInstance.create(shared_dir / "nginx", error_server(hanging.port))
    log = nginx.prefix / "logs" / "error.log"
    rotated = log.with_name("error.log.1")
    nginx.start()
    try:
        sampler = sampler_for(nginx, tmp_path / "state")
        samples = [sampler.sample()]
        request_missing(nginx.base_url, 40, "a")
        samples.append(sampler.sample())
        request_missing(nginx.base_url, 25, "b")
        if rotation == "rename":
            log.rename(rotated)
            request_missing(nginx.base_url, 15, "c")  # still into the renamed file
            assert nginx.process is not None
            os.kill(nginx.process.pid, signal.SIGUSR1)  # what logrotate's postrotate does
            wait_for_new_file(log)
        else:
            shutil.copyfile(log, rotated)
            request_missing(nginx.base_url, 15, "c")  # between the copy and the truncation
            with log.open("r+b") as handle:
                handle.truncate(0)
        request_missing(nginx.base_url, 30, "d")
        for _ in range(3):
            samples.append(sampler.sample())
        sampler.close()
    finally:
        nginx.stop()
    counted = error_count(samples)
    if rotation == "rename":
        assert counted == 40 + 25 + 15 + 30
    else:
        # copytruncate loses what nginx wrote between the copy and the truncation: logrotate's
        # own caveat. The agent neither loses more nor counts anything twice.
        assert counted == 40 + 25 + 30


def wait_for_new_file(path: Path, timeout_s: float = 5) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"nginx did not reopen {path}"
        time.sleep(0.02)


def test_syslog_and_server_level_targets_are_listed(
    nginx_factory: Callable[..., NginxInstance], hanging: HangingUpstream, tmp_path: Path
) -> None:
    # A syslog server that takes the datagrams (nginx logs every refused send() otherwise).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as syslog:
        syslog.bind(("127.0.0.1", 0))
        syslog_port = syslog.getsockname()[1]
        extra = (
            f"error_log syslog:server=127.0.0.1:{syslog_port},tag=nginx warn;\n"
            "        error_log logs/site-error.log warn;"
        )
        nginx = nginx_factory(error_server(hanging.port, extra))
        sampler = sampler_for(nginx, tmp_path / "state")
        sampler.sample()
        request_missing(nginx.base_url, 7)
        sample = sampler.sample()
        sampler.close()
    error_log = sample["error_log"]
    assert error_log["files"] == [
        {"path": str(nginx.prefix / "logs" / "error.log"), "readable": True, "error": None},
        {
            "path": f"syslog:server=127.0.0.1:{syslog_port},tag=nginx",
            "readable": False,
            "error": "sent to syslog, not to a file",
        },
        # Relative to the prefix (-p), where nginx opened it.
        {"path": str(nginx.prefix / "logs" / "site-error.log"), "readable": True, "error": None},
    ]
    # The server's own logs replace the main one for its requests: counted once, in its file.
    assert error_log["levels"]["error"] == 7


def test_an_agent_with_error_logs_off_sends_none(
    nginx_factory: Callable[..., NginxInstance], hanging: HangingUpstream, tmp_path: Path
) -> None:
    nginx = nginx_factory(error_server(hanging.port))
    sampler = sampler_for(nginx, tmp_path / "state", error_logs=False)
    assert "error_log" not in sampler.sample()
    sampler.close()
