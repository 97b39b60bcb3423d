"""The demo's upstream app over real HTTP: cacheable pages, uncacheable ones, 404s."""

from __future__ import annotations

import sys
import time

import httpx
from children import ChildProcesses
from nginx_instances import DEMO_DIR, free_port


def test_upstream_serves_pages_with_their_cache_policy(children: ChildProcesses) -> None:
    port = free_port()
    children.start("upstream", [sys.executable, str(DEMO_DIR / "upstream.py"), "--port", str(port)])
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while True:
        try:
            products = httpx.get(f"{base}/api/products")
            break
        except httpx.ConnectError:
            assert time.monotonic() < deadline, "upstream.py did not start listening"
            time.sleep(0.1)

    assert products.status_code == 200
    assert products.headers["cache-control"] == "public, max-age=10"
    assert len(products.json()["items"]) == 25
    assert httpx.get(f"{base}/api/products/7").json()["id"] == "7"
    assert httpx.get(f"{base}/api/time").headers["cache-control"] == "no-store"
    assert httpx.get(f"{base}/").headers["content-type"].startswith("text/html")
    for missing in ("/api/products/abc", "/api/nothing", "/wp-login.php"):
        assert httpx.get(f"{base}{missing}").status_code == 404
