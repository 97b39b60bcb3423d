"""The compose test drives a real nginx and agent on the host with the benchmark harness."""

from __future__ import annotations

import sys
from pathlib import Path

# bench/harness (a real nginx on a free loopback port, the agent as a process) is imported as
# `harness`, as bench/ scripts do.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
