"""Runs one apply in its own process and freezes after a chosen step, for the kill test.

argv[1] is a JSON object: nginx args, pid file, state dir, the action, the step to stop
after and a marker file written when it got there (the test then SIGKILLs this process).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from nginx_fleet_agent.apply.applier import Applier, ApplySettings, NginxProbes
from nginx_fleet_agent.apply.store import ActionStore
from nginx_fleet_agent.collectors.nginx_processes import read_pid_file


def main() -> None:
    """Apply the action; block forever once the chosen step reported ok."""
    spec = json.loads(sys.argv[1])
    apply_dir = Path(spec["state_dir"]) / "apply"

    def on_report(report: dict[str, Any]) -> None:
        if report["step"] == spec["stop_after"] and report["status"] == "ok":
            Path(spec["marker"]).write_text("stopped")
            time.sleep(600)

    applier = Applier(
        ApplySettings(
            apply_dir=apply_dir, nginx_binary=spec["nginx"], verify_s=1.0, test_timeout_s=20
        ),
        ActionStore(apply_dir),
        NginxProbes(master_pid=lambda: read_pid_file(Path(spec["pid_file"]))),
        on_report=on_report,
    )
    applier.apply(spec["action"])


if __name__ == "__main__":
    main()
