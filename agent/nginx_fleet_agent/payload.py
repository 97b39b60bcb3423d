"""The push body of the protocol, built from spooled samples and the current snapshot."""

from __future__ import annotations

from typing import Any

from nginx_fleet_agent import __version__
from nginx_fleet_agent.collectors.nginx_config import ConfigSnapshot


def build_payload(
    *,
    agent_id: str,
    hostname: str,
    labels: dict[str, str],
    samples: list[dict[str, Any]],
    facts: dict[str, Any] | None = None,
    config: ConfigSnapshot | None = None,
    include_config_dump: bool = False,
    gaps: list[dict[str, Any]] | None = None,
    action_reports: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A push body; optional parts are left out rather than sent as null."""
    payload: dict[str, Any] = {
        "agent_id": agent_id,
        "agent_version": __version__,
        "hostname": hostname,
        "labels": labels,
    }
    if facts is not None:
        payload["facts"] = facts
    if config is not None:
        if include_config_dump:
            payload["config"] = {"hash": config.hash, "dump": config.dump}
        payload["config_hash"] = config.hash
    payload["samples"] = samples
    if gaps:
        payload["gaps"] = gaps
    if action_reports:
        payload["action_reports"] = action_reports
    return payload
