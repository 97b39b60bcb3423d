"""Build hook: the config engine ships inside the agent's built wheel, not its editable install."""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class EngineInsideWheel(BuildHookInterface):
    """Adds ../analyzer/nginx_fleet_analyzer to standard wheels.

    In an editable install the copy would shadow the workspace's editable engine (site-packages
    comes before .pth paths), so tests would run a stale engine after its sources changed."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Force-include the engine unless this is an editable build."""
        if version != "editable":
            build_data["force_include"]["../analyzer/nginx_fleet_analyzer"] = "nginx_fleet_analyzer"
