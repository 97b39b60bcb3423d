"""The real nginx-fleet agent as a separate process, configured for one local nginx."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from harness.nginx_instance import NGINX_BINARY, NginxInstance
from harness.processes import ManagedProcess, running

AGENT_COMMAND = str(Path(sys.executable).parent / "nginx-fleet-agent")


def write_agent_config(
    path: Path,
    *,
    server_url: str,
    state_dir: Path,
    nginx: NginxInstance,
    push_interval_s: float,
    apply_verify_s: float | None = None,
) -> None:
    """A TOML config pointing the agent at `nginx` and the server (stub_status is discovered).

    With `apply_verify_s` the agent also applies approved changes (`allow_apply = true`) and
    watches nginx that long after each reload."""
    nginx_args = ["-p", str(nginx.prefix), "-c", str(nginx.config_file)]
    # JSON string and list syntax is valid TOML for these plain values.
    text = (
        f"server_url = {json.dumps(server_url)}\n"
        f"state_dir = {json.dumps(str(state_dir))}\n"
        f"push_interval_s = {push_interval_s}\n"
        f'hostname = "bench-agent"\n'
        f"nginx_binary = {json.dumps(NGINX_BINARY)}\n"
        f"nginx_args = {json.dumps(nginx_args)}\n"
        f'log_level = "WARNING"\n'
    )
    if apply_verify_s is not None:
        text += f"allow_apply = true\napply_verify_s = {apply_verify_s}\n"
    path.write_text(text)


def enroll(config: Path, *, server_url: str, token: str) -> None:
    """`nginx-fleet-agent enroll`, failing loudly with its output."""
    done = subprocess.run(
        [
            AGENT_COMMAND,
            "--config",
            str(config),
            "enroll",
            "--server",
            server_url,
            "--token",
            token,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"agent enroll failed ({done.returncode}):\n{done.stdout}{done.stderr}")


@contextlib.contextmanager
def running_agent(config: Path, *, log_path: Path) -> Iterator[ManagedProcess]:
    """`nginx-fleet-agent run` until the block ends; SIGTERM (its clean stop) by PID."""
    with running("agent", [AGENT_COMMAND, "--config", str(config), "run"], log_path=log_path) as p:
        yield p
