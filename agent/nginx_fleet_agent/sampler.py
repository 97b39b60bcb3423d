"""Takes one sample from every collector and keeps the config snapshot and facts current."""

from __future__ import annotations

import logging
import posixpath
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nginx_fleet_analyzer.loader import parse_dump
from nginx_fleet_analyzer.model import ParsedConfig

from nginx_fleet_agent.access_log.collector import AccessLogCollector
from nginx_fleet_agent.collectors.base import Collector
from nginx_fleet_agent.collectors.nginx_build import FactsCollector, NginxBuild
from nginx_fleet_agent.collectors.nginx_config import ConfigSnapshot, NginxConfigCollector
from nginx_fleet_agent.collectors.nginx_processes import NginxProcessCollector
from nginx_fleet_agent.collectors.proc import SystemCollector
from nginx_fleet_agent.collectors.stub_status import (
    NO_LOCATION_ERROR,
    StubStatusCollector,
    not_running,
)
from nginx_fleet_agent.collectors.tls_certificates import TlsCertificateCollector
from nginx_fleet_agent.config import AgentConfig
from nginx_fleet_agent.error_log.collector import ErrorLogCollector
from nginx_fleet_agent.nginx_command import NginxCommand
from nginx_fleet_agent.nginx_syntax import Directive

log = logging.getLogger(__name__)


class Sampler:
    """Owns the collectors; `sample` returns one protocol sample without its `seq`."""

    def __init__(self, config: AgentConfig) -> None:
        self._command = NginxCommand(config.nginx_binary, config.nginx_args)
        self._configured_pid_file = config.pid_file
        self._allow_apply = config.allow_apply
        self.hostname = config.hostname or socket.gethostname()
        self.config_collector = NginxConfigCollector(self._command, config.config_rescan_cycles)
        self.facts_collector = FactsCollector(self._command)
        self.stub_status = StubStatusCollector(config.stub_status_url)
        self.access_logs = (
            AccessLogCollector(
                top_paths=config.access_log_top_paths,
                rotate_wait_s=config.access_log_rotate_wait_s,
            )
            if config.access_logs
            else None
        )
        self.error_logs = (
            ErrorLogCollector(rotate_wait_s=config.access_log_rotate_wait_s)
            if config.error_logs
            else None
        )
        self.tls_certificates = TlsCertificateCollector() if config.tls_certificates else None
        self.system: Collector = SystemCollector()
        self.facts: dict[str, Any] = {}
        self.config_collector.refresh(force=True)
        self._apply_config()
        self.processes = NginxProcessCollector(pid_file=self._resolve_pid_file())
        self._master_pid = self.processes.master_pid

    @property
    def config(self) -> ConfigSnapshot | None:
        """The latest redacted configuration, if it could ever be read."""
        return self.config_collector.snapshot

    def sample(self) -> dict[str, Any]:
        """Collect once from every source."""
        ts = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._refresh_config(force=False)
        processes = self.processes.collect()
        if processes["nginx"]["master_pid"] != self._master_pid:
            # nginx (re)started: its config and binary may have changed under the same mtimes.
            self._master_pid = processes["nginx"]["master_pid"]
            self._refresh_config(force=True)
        counters = self.stub_status.collect() if processes["nginx"]["up"] else not_running()
        if counters["stub_status"]["error"] == NO_LOCATION_ERROR and self.config_collector.error:
            # Nothing was discovered because the config could not be read: say that instead.
            counters["stub_status"]["error"] = (
                f"stub_status URL unknown: {self.config_collector.error}"
            )
        sample = {"ts": ts, **processes, **counters, **self.system.collect()}
        if self.access_logs is not None:
            try:
                access_log = self.access_logs.collect()
            except Exception:
                # A bug in log parsing must not cost the sample its other figures.
                log.exception("reading the access logs failed")
                access_log = None
            if access_log is not None:
                sample["access_log"] = access_log
        if self.error_logs is not None:
            try:
                error_log = self.error_logs.collect()
            except Exception:
                log.exception("reading the error logs failed")
                error_log = None
            if error_log is not None:
                sample["error_log"] = error_log
        if self.tls_certificates is not None and self.tls_certificates.due:
            # A new dict: the agent resends facts when they differ from the ones it sent.
            self.facts = {**self.facts, "tls_certificates": self.tls_certificates.collect()}
        return sample

    def access_log_positions(self) -> dict[str, Any]:
        """Where each access log was read up to, to store with the sample just taken."""
        return self.access_logs.positions() if self.access_logs is not None else {}

    def error_log_positions(self) -> dict[str, Any]:
        """Where each error log was read up to, to store with the sample just taken."""
        return self.error_logs.positions() if self.error_logs is not None else {}

    def refresh_config(self) -> None:
        """Re-read `nginx -T` now (after a change was applied or rolled back)."""
        self._refresh_config(force=True)

    def close(self) -> None:
        """Release network resources and open log files."""
        self.stub_status.close()
        if self.access_logs is not None:
            self.access_logs.close()
        if self.error_logs is not None:
            self.error_logs.close()

    def _refresh_config(self, *, force: bool) -> None:
        if self.config_collector.refresh(force=force):
            self._apply_config()
            self.processes.pid_file = self._resolve_pid_file()

    def _apply_config(self) -> None:
        # The UI offers changes only to hosts whose agent says it may apply them.
        self.facts = {**self.facts_collector.collect(), "apply_allowed": self._allow_apply}
        if self.config is not None:
            self.stub_status.use_config(self.config.tree)
            build = self.facts_collector.build
            prefix = nginx_prefix(build, self._command.prefix_arg())
            if self.access_logs is not None:
                self.access_logs.use_config(
                    self.config.dump,
                    prefix=prefix,
                    default_path=build.option("http-log-path") if build else None,
                )
            wanted = self.error_logs is not None or self.tls_certificates is not None
            parsed = self._parse_config() if wanted else None
            if parsed is not None and self.error_logs is not None:
                self.error_logs.use_config(
                    parsed,
                    prefix=prefix,
                    default_path=default_error_log(build, self._command.args),
                )
            if parsed is not None and self.tls_certificates is not None:
                self.tls_certificates.use_config(parsed)
        if self.tls_certificates is not None:
            self.facts["tls_certificates"] = self.tls_certificates.collect()

    def _parse_config(self) -> ParsedConfig | None:
        """The analyzer's view of the current dump, for the collectors that use it."""
        assert self.config is not None
        try:
            return parse_dump(self.config.dump)
        except Exception:  # the config engine reports, never crashes; belt and braces
            log.exception("the config engine could not parse the nginx config")
            return None

    def _resolve_pid_file(self) -> Path | None:
        if self._configured_pid_file is not None:
            return self._configured_pid_file
        tree = self.config.tree if self.config else []
        return pid_file_of(tree, self.facts_collector.build, self._command.prefix_arg())


def pid_file_of(
    tree: list[Directive], build: NginxBuild | None, prefix_arg: str | None
) -> Path | None:
    """The pid file nginx writes: the `pid` directive, else the compiled-in default.

    Relative paths are resolved against the prefix (`-p`, else the compiled --prefix), as nginx
    does. None means unknown: the master is then found by scanning /proc.
    """
    prefix = nginx_prefix(build, prefix_arg)
    paths = [d.args[0].text for d in tree if d.name == "pid" and d.args]
    pid_path = paths[-1] if paths else (build.option("pid-path") if build else None)
    if pid_path is None:
        return None
    if not posixpath.isabs(pid_path):
        if prefix is None:
            return None
        pid_path = posixpath.join(prefix, pid_path)
    return Path(pid_path)


def nginx_prefix(build: NginxBuild | None, prefix_arg: str | None) -> str | None:
    """nginx's prefix: `-p` when given, else the compiled-in --prefix."""
    return prefix_arg or (build.option("prefix") if build else None)


def default_error_log(build: NginxBuild | None, args: list[str]) -> str | None:
    """The error log nginx opens when the config sets no file: `-e`, else the compiled-in one.

    Returns `stderr` for standard error (`-e stderr`, or Debian's --error-log-path=stderr), None
    when unknown (nginx's own default, logs/error.log under the prefix, then applies)."""
    found = None
    values = iter(args)
    for arg in values:
        if arg == "-e":
            found = next(values, None)
        elif arg.startswith("-e"):
            found = arg[2:]
        elif arg in ("-p", "-c", "-g", "-s"):
            next(values, None)  # a value, not an option, even when it starts with "-e"
    if found is not None:
        return found
    return build.option("error-log-path") if build else None
