"""scripts/system-deps.sh: what it finds missing; without root it stops with the one command."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from conftest import SCRIPTS_DIR

SCRIPT = SCRIPTS_DIR / "system-deps.sh"


def run(
    *args: str, env: dict[str, str], user: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the script with env added to a minimal environment."""
    base = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
    return subprocess.run(
        [*(user or []), str(SCRIPT), *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def fake_bin(tmp_path: Path, *commands: str) -> Path:
    """A directory holding executables of these names only (they do nothing)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for command in commands:
        stub = folder / command
        stub.write_text("#!/bin/sh\nexit 0\n")
        stub.chmod(0o755)
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_dry_run_lists_exactly_the_packages_whose_command_is_missing(tmp_path: Path) -> None:
    search = fake_bin(tmp_path, "chromium", "wrk")

    done = run(
        "--dry-run",
        "packages",
        "nginx",
        "chromium",
        "wrk",
        "chromium-driver",
        env={"SYSTEM_DEPS_PATH": str(search)},
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "would install: nginx chromium-driver"


def test_nothing_to_do_when_every_command_is_there(tmp_path: Path) -> None:
    search = fake_bin(tmp_path, "nginx", "wrk")

    done = run("--dry-run", "packages", "nginx", "wrk", env={"SYSTEM_DEPS_PATH": str(search)})

    assert (done.returncode, done.stdout) == (0, "")


def test_an_unknown_package_name_is_refused() -> None:
    done = run("--dry-run", "packages", "nginx-extras-typo", env={})
    assert done.returncode == 2
    assert "unknown package 'nginx-extras-typo'" in done.stderr


def unprivileged() -> list[str]:
    """A prefix running a command without root and without sudo, or skip when there is none."""
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv to drop privileges")
        return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    sudo = shutil.which("sudo")
    if (
        sudo
        and subprocess.run([sudo, "-n", "true"], capture_output=True, check=False).returncode == 0
    ):
        pytest.skip("this user has passwordless sudo: the script would install for real")
    return []


def test_without_root_or_sudo_it_stops_at_once_with_the_one_command_to_run() -> None:
    # A search path without nginx: the script must see it as missing and want to install it.
    done = run("packages", "nginx", env={"SYSTEM_DEPS_PATH": "/nonexistent"}, user=unprivileged())

    assert done.returncode == 1
    assert "missing: nginx" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"sudo {SCRIPT} packages nginx"
    assert "installing:" not in done.stderr


def test_services_dry_run_starts_only_local_servers_that_are_down() -> None:
    down_pg, down_redis = free_port(), free_port()
    local = run(
        "--dry-run",
        "services",
        env={
            "TEST_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:{down_pg}/test",
            "TEST_REDIS_URL": f"redis://127.0.0.1:{down_redis}/15",
        },
    )
    assert local.returncode == 0, local.stderr
    assert f"would start: a PostgreSQL cluster on port {down_pg}" in local.stdout
    assert f"would start: redis-server on 127.0.0.1:{down_redis}" in local.stdout

    remote = run(
        "--dry-run",
        "services",
        env={
            "TEST_DATABASE_URL": "postgresql://u:secret@db.example.test:5432/test",
            "TEST_REDIS_URL": "redis://cache.example.test:6379/0",
        },
    )
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == ""
    assert "db.example.test:5432 is not on this machine" in remote.stderr
    assert "cache.example.test:6379 is not on this machine" in remote.stderr
