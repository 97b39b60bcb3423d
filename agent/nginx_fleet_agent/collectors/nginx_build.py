"""Host facts: the nginx build (`nginx -V`) and the machine it runs on."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nginx_fleet_agent.nginx_command import NginxCommand, NginxCommandError

_VERSION = re.compile(r"nginx version: [^/\s]+/(?P<version>\S+)")
_CONFIGURE = re.compile(r"^configure arguments:\s*(?P<args>.*)$", re.MULTILINE)
# "built with OpenSSL 3.0.11 19 Sep 2023 (running with OpenSSL 3.0.13 30 Jan 2024)"
_OPENSSL = re.compile(
    r"built with OpenSSL (?P<built>\S+)[^\n(]*(?:\(running with OpenSSL (?P<running>\S+))?"
)


@dataclass(frozen=True)
class NginxBuild:
    """What `nginx -V` says about the binary."""

    version: str | None
    configure_args: str
    modules: list[str]
    # The OpenSSL nginx runs with (the library loaded, else the one it was built with).
    openssl_version: str | None = None

    def option(self, name: str) -> str | None:
        """The value of one `--name=value` configure argument."""
        for arg in _split_args(self.configure_args):
            key, sep, value = arg.partition("=")
            if sep and key == f"--{name}":
                return value
        return None


def parse_nginx_v(output: str) -> NginxBuild:
    """Parse `nginx -V` (printed on stderr) into version, configure arguments and modules."""
    version = _VERSION.search(output)
    configure = _CONFIGURE.search(output)
    args = configure.group("args").strip() if configure else ""
    modules = []
    for arg in _split_args(args):
        flag = arg.partition("=")[0]
        if flag.startswith("--with-") and flag.endswith("_module"):
            modules.append(flag.removeprefix("--with-"))
        elif flag in {"--with-stream", "--with-mail"}:
            modules.append(flag.removeprefix("--with-") + "_module")
    openssl = _OPENSSL.search(output)
    return NginxBuild(
        version.group("version") if version else None,
        args,
        modules,
        (openssl.group("running") or openssl.group("built")) if openssl else None,
    )


def _split_args(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def host_facts(
    proc: Path = Path("/proc"), os_release: Path = Path("/etc/os-release")
) -> dict[str, Any]:
    """CPU count, memory, kernel, somaxconn and OS name of this machine."""
    mem_total = None
    for line in (proc / "meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_total = int(line.split()[1]) * 1024
            break
    try:
        somaxconn: int | None = int((proc / "sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        somaxconn = None
    return {
        "cpu_count": os.cpu_count(),
        "mem_total_bytes": mem_total,
        "kernel": os.uname().release,
        "somaxconn": somaxconn,
        "os": _os_name(os_release),
    }


def _os_name(path: Path) -> str | None:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    fields = dict(line.partition("=")[::2] for line in lines if "=" in line)
    name = fields.get("PRETTY_NAME") or fields.get("NAME")
    return name.strip().strip('"') if name else None


class FactsCollector:
    """Facts for the push payload; `nginx -V` runs again only when the binary changes."""

    def __init__(self, command: NginxCommand) -> None:
        self._command = command
        self._binary_id: tuple[int, int] | None = None
        self.build: NginxBuild | None = None
        self.error: str | None = None

    def collect(self) -> dict[str, Any]:
        """Facts as the protocol's `facts` object."""
        self._refresh_build()
        facts: dict[str, Any] = {
            "nginx_version": self.build.version if self.build else None,
            "nginx_configure_args": self.build.configure_args if self.build else None,
            "nginx_modules": self.build.modules if self.build else [],
            "nginx_openssl_version": self.build.openssl_version if self.build else None,
        }
        facts.update(host_facts())
        return facts

    def _refresh_build(self) -> None:
        try:
            stat = os.stat(self._command.binary)
        except OSError:
            binary_id = None
        else:
            binary_id = (stat.st_mtime_ns, stat.st_ino)
        if self.build is not None and binary_id == self._binary_id:
            return
        self._binary_id = binary_id
        try:
            result = self._command.run("-V")
        except NginxCommandError as exc:
            self.error = str(exc)
            self.build = None
            return
        self.error = None
        self.build = parse_nginx_v(result.stderr + result.stdout)
