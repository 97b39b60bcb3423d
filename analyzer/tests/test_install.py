"""The engine installs from its wheel alone, as on a CI runner: no backend, no other package."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SITE = "server {\n    listen 443 ssl;\n    ssl_protocols SSLv3 TLSv1.2;\n}\n"


def _run(*argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=cwd,
    )


@pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv to build the wheel")
def test_wheel_installs_into_a_bare_venv_and_runs(tmp_path: Path) -> None:
    built = _run(
        "uv", "build", "--wheel", "--package", "nginx-fleet-analyzer", "-o", tmp_path / "dist",
        cwd=REPO,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("nginx_fleet_analyzer-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [
            line
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert requires == []
    assert {t for t in tops if not t.endswith(".dist-info")} == {"nginx_fleet_analyzer"}

    venv = tmp_path / "venv"
    made = _run(sys.executable, "-m", "venv", venv)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = _run(python, "-m", "pip", "install", "--no-index", "--quiet", wheel)
    assert installed.returncode == 0, installed.stderr
    packages = json.loads(_run(python, "-m", "pip", "list", "--format", "json").stdout)
    names = {p["name"] for p in packages} - {"pip", "setuptools", "wheel"}
    assert names == {"nginx-fleet-analyzer"}
    assert _run(python, "-c", "import app").returncode != 0

    site = tmp_path / "site.conf"
    site.write_text(SITE)
    done = _run(venv / "bin" / "nginx-fleet-analyze", site, "--format", "sarif", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    run = json.loads(done.stdout)["runs"][0]
    assert run["properties"]["context"] == "http"
    assert [r["ruleId"] for r in run["results"] if r["level"] == "error"] == ["S-protocols"]
