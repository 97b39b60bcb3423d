"""The demo's nginx templates, rendered and run by the real nginx."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from children import ChildProcesses, group_alive
from nginx_instances import (
    DEMO_DIR,
    INSTANCES,
    NginxInstance,
    free_port,
    render_instance,
    wait_until_serving,
)


def start_all(children: ChildProcesses, nginx_binary: str, root: Path) -> list[NginxInstance]:
    """Start the upstream app and every instance the way the launcher does."""
    upstream_port = free_port()
    children.start(
        "upstream", [sys.executable, str(DEMO_DIR / "upstream.py"), "--port", str(upstream_port)]
    )
    instances = []
    for spec in INSTANCES:
        instance = render_instance(spec, root, port=free_port(), upstream_port=upstream_port)
        children.start(
            spec.name,
            [nginx_binary, *instance.nginx_args(), "-g", "daemon off;"],
            stop_signal=signal.SIGQUIT,
            signal_leader_only=True,
        )
        wait_until_serving(instance)
        instances.append(instance)
    return instances


def test_every_template_passes_nginx_t(nginx_binary: str, nginx_root: Path) -> None:
    for spec in INSTANCES:
        instance = render_instance(spec, nginx_root, port=free_port(), upstream_port=free_port())
        result = subprocess.run(
            [nginx_binary, *instance.nginx_args(), "-t"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"{spec.name}: {result.stderr}"
        assert "test is successful" in result.stderr


def test_cache_template_needs_an_upstream_port(nginx_root: Path) -> None:
    cache = next(spec for spec in INSTANCES if spec.needs_upstream)
    with pytest.raises(ValueError, match="upstream port"):
        render_instance(cache, nginx_root, port=free_port(), upstream_port=None)


def test_instances_serve_status_site_gzip_and_cache(
    nginx_binary: str, nginx_root: Path, children: ChildProcesses
) -> None:
    default, tuned, cache, _ = start_all(children, nginx_binary, nginx_root)

    status = httpx.get(default.status_url).text
    assert status.startswith("Active connections:")
    assert httpx.get(default.base_url + "/").status_code == 200
    assert httpx.get(default.base_url + "/missing.html").status_code == 404

    script = httpx.get(tuned.base_url + "/assets/app.js", headers={"Accept-Encoding": "gzip"})
    assert script.headers["content-encoding"] == "gzip"
    assert "immutable" in script.headers["cache-control"]
    assert httpx.get(default.base_url + "/assets/app.js").headers.get("content-encoding") is None

    first = httpx.get(cache.base_url + "/api/products")
    second = httpx.get(cache.base_url + "/api/products")
    assert (first.headers["x-cache-status"], second.headers["x-cache-status"]) == ("MISS", "HIT")
    assert second.json() == first.json()
    assert httpx.get(cache.base_url + "/api/time").headers["x-cache-status"] != "HIT"
    log = (cache.prefix / "logs" / "access.log").read_text()
    assert "cache=HIT" in log and "rt=" in log


def test_stop_all_leaves_no_nginx_process(
    nginx_binary: str, nginx_root: Path, children: ChildProcesses
) -> None:
    start_all(children, nginx_binary, nginx_root)
    assert children.exited() == [], "nothing should have exited on its own"
    pids = [int((nginx_root / spec.name / "logs" / "nginx.pid").read_text()) for spec in INSTANCES]
    assert all(group_alive(pid) for pid in pids)

    children.stop_all()

    assert not any(group_alive(pid) for pid in pids)
    assert not any((nginx_root / spec.name / "logs" / "nginx.pid").exists() for spec in INSTANCES)
