"""The peer tools the analysis benchmarks compare with, in a throw-away venv of pinned versions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
OUT = BENCH / "out" / "analysis"
# Under bench/out (git-ignored): removing it removes the peers too.
VENV = OUT / "peers"
PYTHON = VENV / "bin" / "python"
GIXY = VENV / "bin" / "gixy"
# Pinned so that figures of different runs compare the same code.
PINS = ("gixy==0.1.21", "crossplane==0.5.8")
_STAMP = VENV / "pins.txt"


def ensure_peers() -> str | None:
    """Create the venv with the pinned peers when missing; None when ready, else why not."""
    wanted = "\n".join(PINS)
    if PYTHON.exists() and _STAMP.exists() and _STAMP.read_text() == wanted:
        return None
    try:
        subprocess.run(
            ["uv", "venv", "--quiet", "--clear", str(VENV), "--python", sys.executable],
            check=True,
            capture_output=True,
            timeout=120,
        )
        subprocess.run(
            ["uv", "pip", "install", "--quiet", "--python", str(PYTHON), *PINS],
            check=True,
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        return f"{exc} {detail.decode(errors='replace').strip()[-300:]}".strip()
    _STAMP.write_text(wanted)
    return None
