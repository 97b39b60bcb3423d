"""Running the nginx binary (`-T`, `-V`) with the operator's extra arguments."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from nginx_fleet_agent import defaults


class NginxCommandError(Exception):
    """nginx could not be run or reported a failure."""


@dataclass(frozen=True)
class NginxCommand:
    """The nginx binary plus the arguments that select its prefix and config (`-p`, `-c`)."""

    binary: str = defaults.NGINX_BINARY
    args: list[str] = field(default_factory=list)
    timeout_s: float = defaults.NGINX_COMMAND_TIMEOUT_S

    def run(self, flag: str) -> subprocess.CompletedProcess[str]:
        """Run `nginx <args> <flag>` and return its output; raise with nginx's words on failure."""
        argv = [self.binary, *self.args, flag]
        try:
            result = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=self.timeout_s,
                check=False,
            )
        except FileNotFoundError:
            raise NginxCommandError(f"nginx binary not found: {self.binary}") from None
        except PermissionError:
            raise NginxCommandError(f"nginx binary not executable: {self.binary}") from None
        except subprocess.TimeoutExpired:
            raise NginxCommandError(
                f"`{' '.join(argv)}` did not finish within {self.timeout_s:g} s"
            ) from None
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.strip()]
            reason = lines[-1] if lines else f"exit status {result.returncode}"
            raise NginxCommandError(f"`{' '.join(argv)}` failed: {reason}")
        return result

    def prefix_arg(self) -> str | None:
        """The `-p PREFIX` given in the extra arguments, if any."""
        for index, arg in enumerate(self.args):
            if arg == "-p" and index + 1 < len(self.args):
                return self.args[index + 1]
            if arg.startswith("-p") and len(arg) > 2:
                return arg[2:]
        return None
