"""A small dynamic app for demo-cache to proxy: JSON and HTML pages with varying latency."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Page:
    """One route: how long it takes, how it may be cached and what it returns."""

    latency_s: tuple[float, float]
    cache_control: str
    content_type: str
    render: Callable[[str], str]


def _products(_path: str) -> str:
    items = [{"id": i, "name": f"product-{i}", "price_cents": 100 + 37 * i} for i in range(25)]
    return json.dumps({"items": items})


def _product(path: str) -> str:
    product_id = path.rsplit("/", 1)[-1]
    return json.dumps({"id": product_id, "stock": random.randint(0, 50)})


def _time(_path: str) -> str:
    return json.dumps({"server_time": time.time()})


def _report(_path: str) -> str:
    return json.dumps({"rows": [random.random() for _ in range(200)]})


def _home(_path: str) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Demo app</title>"
        "</head><body><h1>Demo app</h1><p>Rendered by demo/upstream.py.</p></body></html>"
    )


ROUTES: dict[str, Page] = {
    "/": Page((0.01, 0.04), "public, max-age=30", "text/html; charset=utf-8", _home),
    "/api/products": Page((0.02, 0.08), "public, max-age=10", "application/json", _products),
    "/api/time": Page((0.005, 0.03), "no-store", "application/json", _time),
    "/api/report": Page((0.2, 0.6), "public, max-age=60", "application/json", _report),
}
# /api/products/<id> is cacheable briefly; anything else under /api/ or elsewhere is a 404.
PRODUCT_PAGE = Page((0.01, 0.05), "public, max-age=5", "application/json", _product)


def find_page(path: str) -> Page | None:
    """Return the page that serves a request path, or None for a 404."""
    path = path.split("?", 1)[0]
    if path in ROUTES:
        return ROUTES[path]
    prefix, _, product_id = path.rpartition("/")
    if prefix == "/api/products" and product_id.isdigit():
        return PRODUCT_PAGE
    return None


class DemoAppHandler(BaseHTTPRequestHandler):
    """Serves the routes above over HTTP/1.1 so that nginx can keep upstream connections open."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        """Answer one GET after the route's simulated processing time."""
        page = find_page(self.path)
        if page is None:
            self._send(
                HTTPStatus.NOT_FOUND, "no-store", "application/json", '{"error":"not found"}'
            )
            return
        time.sleep(random.uniform(*page.latency_s))
        self._send(HTTPStatus.OK, page.cache_control, page.content_type, page.render(self.path))

    def _send(self, status: HTTPStatus, cache_control: str, content_type: str, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", cache_control)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: nginx's access log already records every request."""


def main(argv: list[str] | None = None) -> int:
    """Serve the demo app on 127.0.0.1 until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True, help="loopback port to listen on")
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), DemoAppHandler)
    server.daemon_threads = True
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
