"""The `nginx-fleet` console script: `analyze` runs the engine without loading the web stack."""

from __future__ import annotations

import sys


def main() -> int:
    """Dispatch `analyze` to the standalone engine; every other command to `app.cli`."""
    if sys.argv[1:2] == ["analyze"]:
        from nginx_fleet_analyzer.cli import run

        run(sys.argv[2:], prog="nginx-fleet analyze")
    from app.cli import main as full

    return full()
