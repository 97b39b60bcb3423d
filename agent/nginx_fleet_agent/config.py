"""Agent settings: a TOML file overridden by NGINX_FLEET_AGENT_* environment variables."""

from __future__ import annotations

import dataclasses
import os
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nginx_fleet_agent import defaults


class ConfigError(Exception):
    """The configuration file or an environment variable holds an unusable value."""


@dataclass(frozen=True)
class AgentConfig:
    """Everything the agent can be configured with."""

    server_url: str | None = None
    state_dir: Path = defaults.STATE_DIR
    push_interval_s: float = defaults.PUSH_INTERVAL_S
    hostname: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    stub_status_url: str | None = None
    nginx_binary: str = defaults.NGINX_BINARY
    nginx_args: list[str] = field(default_factory=list)
    pid_file: Path | None = None
    allow_apply: bool = False
    apply_verify_s: float = defaults.APPLY_VERIFY_S
    spool_max_samples: int = defaults.SPOOL_MAX_SAMPLES
    spool_max_bytes: int = defaults.SPOOL_MAX_BYTES
    tls_verify: bool = True
    ca_file: Path | None = None
    request_timeout_s: float = defaults.REQUEST_TIMEOUT_S
    backoff_cap_s: float = defaults.BACKOFF_CAP_S
    config_rescan_cycles: int = defaults.CONFIG_RESCAN_CYCLES
    access_logs: bool = defaults.ACCESS_LOGS
    access_log_top_paths: int = defaults.ACCESS_LOG_TOP_PATHS
    access_log_rotate_wait_s: float = defaults.ACCESS_LOG_ROTATE_WAIT_S
    error_logs: bool = defaults.ERROR_LOGS
    tls_certificates: bool = defaults.TLS_CERTIFICATES
    log_level: str = defaults.LOG_LEVEL

    @property
    def state_file(self) -> Path:
        """Path of the enrolment state file."""
        return self.state_dir / defaults.STATE_FILE_NAME

    @property
    def spool_file(self) -> Path:
        """Path of the on-disk sample spool."""
        return self.state_dir / defaults.SPOOL_FILE_NAME

    @property
    def apply_dir(self) -> Path:
        """Journals, backups and step reports of applied changes (outside the nginx tree)."""
        return self.state_dir / defaults.APPLY_DIR_NAME


_FIELDS = {f.name: f for f in dataclasses.fields(AgentConfig)}


def load_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> AgentConfig:
    """Read the TOML file (the default one may be absent), then apply environment overrides."""
    environ = os.environ if env is None else env
    values: dict[str, Any] = {}
    file_path = path if path is not None else defaults.CONFIG_PATH
    if file_path.exists():
        values.update(_read_toml(file_path))
    elif path is not None:
        raise ConfigError(f"config file {path} does not exist")
    for name in _FIELDS:
        raw = environ.get(defaults.ENV_PREFIX + name.upper())
        if raw is not None:
            values[name] = _parse_env(name, raw)
    return _build(values, source=str(file_path))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s): {', '.join(unknown)}")
    return data


def _parse_env(name: str, raw: str) -> Any:
    """Turn an environment string into the shape the TOML file would have given."""
    kind = _FIELDS[name].type
    if name == "labels":
        return _parse_labels(raw, source=defaults.ENV_PREFIX + "LABELS")
    if name == "nginx_args":
        return shlex.split(raw)
    if kind == "bool":
        lowered = raw.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
        raise ConfigError(
            f"{defaults.ENV_PREFIX}{name.upper()}: expected true or false, got {raw!r}"
        )
    if kind in {"int", "float"}:
        try:
            return int(raw) if kind == "int" else float(raw)
        except ValueError:
            raise ConfigError(
                f"{defaults.ENV_PREFIX}{name.upper()}: expected a number, got {raw!r}"
            ) from None
    return raw


def _parse_labels(raw: str, *, source: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"{source}: expected key=value pairs separated by commas, got {item!r}"
            )
        labels[key.strip()] = value.strip()
    return labels


def parse_label(item: str) -> tuple[str, str]:
    """Parse one `key=value` command-line label."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"label {item!r}: expected key=value")
    return key.strip(), value.strip()


def _build(values: dict[str, Any], *, source: str) -> AgentConfig:
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        kwargs[name] = _coerce(name, value, source=source)
    config = AgentConfig(**kwargs)
    if config.push_interval_s < defaults.MIN_PUSH_INTERVAL_S:
        raise ConfigError(f"push_interval_s must be >= {defaults.MIN_PUSH_INTERVAL_S}")
    for name in ("spool_max_samples", "spool_max_bytes", "config_rescan_cycles"):
        if getattr(config, name) < 1:
            raise ConfigError(f"{name} must be >= 1")
    if config.log_level.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
        raise ConfigError(
            f"log_level must be DEBUG, INFO, WARNING or ERROR, not {config.log_level!r}"
        )
    if not 0 < config.apply_verify_s <= 300:
        raise ConfigError("apply_verify_s must be > 0 and <= 300")
    if not 0 <= config.access_log_top_paths <= 100:
        raise ConfigError("access_log_top_paths must be between 0 (off) and 100")
    if not 0 <= config.access_log_rotate_wait_s <= 300:
        raise ConfigError("access_log_rotate_wait_s must be >= 0 and <= 300")
    if config.request_timeout_s <= 0:
        raise ConfigError("request_timeout_s must be > 0")
    if config.backoff_cap_s < defaults.BACKOFF_BASE_S:
        raise ConfigError(f"backoff_cap_s must be >= {defaults.BACKOFF_BASE_S:g}")
    return config


def _coerce(name: str, value: Any, *, source: str) -> Any:
    """Check one value against the field's type; empty strings mean "not set" for optionals."""
    kind = _FIELDS[name].type
    where = f"{source}: {name}"
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer")
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number")
        return float(value)
    if kind == "dict[str, str]":
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"{where}: expected a table of strings")
        return dict(value)
    if kind == "list[str]":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: expected a list of strings")
        return list(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string")
    if kind == "Path":
        return Path(value)
    if kind == "Path | None":
        return Path(value) if value else None
    if kind == "str | None":
        return value or None
    return value
