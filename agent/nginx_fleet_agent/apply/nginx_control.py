"""The running nginx master: its own arguments, `nginx -T`/`-t` with them, reload, workers, logs."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from nginx_fleet_agent.collectors.nginx_processes import children_of, read_cmdline

MASTER_TITLE = "nginx: master process "
WORKER_TITLE = "nginx: worker process"
# nginx's command-line flags: a `-g` value (which may hold spaces) runs until the next of them.
_FLAGS = {"-?", "-h", "-v", "-V", "-t", "-T", "-q", "-s", "-p", "-e", "-c", "-g"}
_VALUE_FLAGS = ("-p", "-e", "-c", "-g")
BAD_LEVEL = re.compile(r"\[(emerg|alert|crit)\]")
# "2026/11/24 10:00:03 [emerg] 123#123: " of an error log line, shortened to "nginx: [emerg] "
# as `nginx -t` words it.
_LOG_PREFIX = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (\[\w+\]) \d+#\d+: (?:\*\d+ )?")


class NginxControlError(Exception):
    """nginx could not be run or signalled; the message says why."""


@dataclass(frozen=True)
class Master:
    """The running master: pid, the `-p`/`-c`/`-g`/`-e` it was started with, its cwd."""

    pid: int
    args: tuple[str, ...]
    cwd: str | None

    def option(self, flag: str) -> str | None:
        """The value of one of the master's flags (`-p`), or None."""
        for index in range(0, len(self.args) - 1, 2):
            if self.args[index] == flag:
                return self.args[index + 1]
        return None


def master_args(title: str) -> tuple[str, ...]:
    """The prefix/config/global flags of a master's title ("nginx: master process ARGV...").

    nginx overwrites its argv with that title, joining the original words with spaces, so a
    `-g` value's own spaces cannot be told apart: its words are joined back with one space."""
    words = title[len(MASTER_TITLE) :].split() if title.startswith(MASTER_TITLE) else []
    args: list[str] = []
    index = 1  # words[0] is the binary the master was started as
    while index < len(words):
        word = words[index]
        flag = next((f for f in _VALUE_FLAGS if word.startswith(f)), None)
        index += 1
        if flag is None:
            continue
        if word != flag:
            args += [flag, word[len(flag) :]]
            continue
        value: list[str] = []
        while index < len(words) and (not value or (flag == "-g" and words[index] not in _FLAGS)):
            value.append(words[index])
            index += 1
        args += [flag, " ".join(value)]
    return tuple(args)


def read_master(proc: Path, pid: int) -> Master | None:
    """The master with that pid, or None when that pid is not an nginx master."""
    title = read_cmdline(proc, pid)
    if not title.startswith(MASTER_TITLE):
        return None
    try:
        cwd: str | None = os.readlink(proc / str(pid) / "cwd")
    except OSError:
        cwd = None  # relative -p/-c then resolve against the agent's cwd, as best we can
    return Master(pid, master_args(title), cwd)


def live_workers(proc: Path, master: int) -> set[int]:
    """Worker pids of the master that serve (not those shutting down after a reload)."""
    return {pid for pid in children_of(proc, master) if read_cmdline(proc, pid) == WORKER_TITLE}


@dataclass(frozen=True)
class NginxRun:
    """One nginx command's exit status and output."""

    returncode: int
    stdout: bytes
    stderr: str


def run_nginx(binary: str, master: Master, flag: str, *, timeout_s: float) -> NginxRun:
    """Run `nginx <the master's args> <flag>` from the master's cwd."""
    argv = [binary, *master.args, flag]
    try:
        result = subprocess.run(
            argv, capture_output=True, timeout=timeout_s, cwd=master.cwd, check=False
        )
    except FileNotFoundError:
        raise NginxControlError(f"nginx binary not found: {binary}") from None
    except PermissionError:
        raise NginxControlError(f"nginx binary not executable: {binary}") from None
    except subprocess.TimeoutExpired:
        raise NginxControlError(
            f"`{' '.join(argv)}` did not finish within {timeout_s:g} s"
        ) from None
    return NginxRun(result.returncode, result.stdout, result.stderr.decode(errors="replace"))


def config_test_failure(run: NginxRun) -> str | None:
    """nginx's own words when `nginx -t` failed (exit status or an emerg/alert/crit line)."""
    lines = [line.strip() for line in run.stderr.splitlines() if line.strip()]
    bad = [line for line in lines if BAD_LEVEL.search(line)]
    if bad:
        return "\n".join(bad)
    if run.returncode != 0:
        return lines[-1] if lines else f"nginx -t exited with status {run.returncode}"
    return None


def reload(master: Master) -> None:
    """Ask the master to reload its configuration (SIGHUP, what `nginx -s reload` sends)."""
    try:
        os.kill(master.pid, signal.SIGHUP)
    except OSError as exc:
        raise NginxControlError(
            f"cannot signal the nginx master {master.pid}: {exc.strerror}"
        ) from exc


def error_log_paths(
    tree_logs: list[str], master: Master, prefix: str, default: str | None
) -> list[Path]:
    """Files the master logs errors to: main-level `error_log` files, else the built-in one.

    Relative paths are nginx's: against the prefix (`-p`, else the compiled one)."""
    candidates = tree_logs or ([default] if default else [])
    paths = []
    for value in candidates:
        if value == "stderr" or value.startswith(("syslog:", "memory:")):
            continue
        path = Path(prefix, value) if not os.path.isabs(value) else Path(value)
        if master.cwd and not path.is_absolute():
            path = Path(master.cwd, path)
        paths.append(path)
    return paths


def log_offsets(paths: list[Path]) -> dict[Path, int]:
    """Current size of each log, to read only what is written after this point."""
    offsets = {}
    for path in paths:
        try:
            offsets[path] = path.stat().st_size
        except OSError:
            offsets[path] = 0
    return offsets


def bad_lines_since(offsets: dict[Path, int]) -> list[str]:
    """emerg/alert/crit lines written to the logs since the offsets (from 0 if one shrank)."""
    found = []
    for path, offset in offsets.items():
        try:
            with path.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                handle.seek(offset if size >= offset else 0)
                text = handle.read().decode(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if BAD_LEVEL.search(line):
                short = _LOG_PREFIX.sub(r"nginx: \1 ", line.strip())
                if short not in found:  # nginx retries a failing bind() five times
                    found.append(short)
    return found
