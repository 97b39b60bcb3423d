"""Fixtures of the demo tests: the demo modules on sys.path, the nginx binary, a scratch root."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

DEMO_DIR = Path(__file__).resolve().parents[1]
# The demo is a set of scripts run as `python demo/run_demo.py`, so its modules import each other
# as top-level modules; the tests see them the same way.
sys.path.insert(0, str(DEMO_DIR))

from children import ChildProcesses  # noqa: E402
from nginx_instances import find_nginx  # noqa: E402


@pytest.fixture
def nginx_binary() -> str:
    """The Debian nginx the demo runs; the tests need the real one."""
    binary = find_nginx(None)
    assert binary is not None, "nginx is not installed (sudo apt-get install nginx)"
    return binary


@pytest.fixture
def children(tmp_path: Path) -> Iterator[ChildProcesses]:
    """Processes started by a test, all stopped afterwards."""
    started = ChildProcesses(tmp_path)
    yield started
    started.stop_all()


@pytest.fixture
def nginx_root() -> Iterator[Path]:
    """A scratch directory nginx workers can traverse (pytest's tmp_path is private to root)."""
    root = Path(tempfile.mkdtemp(prefix="nf-demo-test-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)
