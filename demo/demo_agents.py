"""One nginx-fleet agent per demo instance: its TOML config, enrolment and run command."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fleet_backend import BackendError, venv_script
from nginx_instances import NginxInstance


def toml_value(value: str | bool | int | float | list[str]) -> str:
    """A TOML literal for the few value kinds the agent config needs."""
    if isinstance(value, bool):
        return "true" if value else "false"  # repr() would give Python's True
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    return repr(value)


@dataclass(frozen=True)
class DemoAgent:
    """The agent watching one demo instance."""

    instance: NginxInstance
    nginx_binary: str
    state_dir: Path
    config_path: Path

    def write_config(
        self, *, server_url: str, push_interval_s: int, labels: dict[str, str]
    ) -> None:
        """Write the agent's TOML file."""
        settings: dict[str, str | bool | int | float | list[str]] = {
            "server_url": server_url,
            "state_dir": str(self.state_dir),
            "hostname": self.instance.spec.name,
            "push_interval_s": push_interval_s,
            "stub_status_url": self.instance.status_url,
            "nginx_binary": self.nginx_binary,
            "nginx_args": self.instance.nginx_args(),
            "pid_file": str(self.instance.prefix / "logs" / "nginx.pid"),
            # The demo shows the whole loop: approved changes are applied to its instances.
            "allow_apply": True,
        }
        lines = [f"{key} = {toml_value(value)}" for key, value in settings.items()]
        lines += [
            "",
            "[labels]",
            *(f"{key} = {toml_value(value)}" for key, value in labels.items()),
        ]
        self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.config_path.write_text("\n".join(lines) + "\n")

    def enroll(self, *, server_url: str, token: str) -> None:
        """Exchange the enrolment token for a host token (rotates it when already enrolled)."""
        result = subprocess.run(
            [
                venv_script("nginx-fleet-agent"),
                "--config",
                str(self.config_path),
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
        if result.returncode != 0:
            raise BackendError(
                f"enrolling {self.instance.spec.name} failed:\n{result.stderr.strip()}"
            )

    def run_command(self) -> list[str]:
        """The command line of the long-running agent."""
        return [venv_script("nginx-fleet-agent"), "--config", str(self.config_path), "run"]
