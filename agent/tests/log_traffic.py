"""Real traffic for access-log tests: a small upstream app, a caching nginx, a bounded load.

Everything listens on loopback and every load is bounded in count. The expected figures are
computed exactly, line by line, from the log files nginx wrote, by code that shares nothing
with the agent's parser.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.nginx_instance import free_port

# A custom text format with quoted fields (some holding spaces and quotes) and the upstream
# lists nginx writes for retried requests.
QUOTED_FORMAT = (
    '\'$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
    '"$http_referer" "$http_user_agent" host=$host rt=$request_time '
    'ua="$upstream_addr" us="$upstream_status" urt="$upstream_response_time" '
    "cs=$upstream_cache_status'"
)
JSON_FORMAT = (
    'escape=json \'{"host":"$host","status":$status,"bytes":$body_bytes_sent,'
    '"request":"$request","rt":$request_time,"ua":"$upstream_addr",'
    '"us":"$upstream_status","urt":"$upstream_response_time",'
    '"cs":"$upstream_cache_status","agent":"$http_user_agent"}\''
)

SITE_TEMPLATE = """
    log_format quoted {quoted};
    log_format jsonl {json};
    {formats}
    proxy_cache_path {cache_dir} levels=1:2 keys_zone=test_cache:1m max_size=16m inactive=10m
                     use_temp_path=off;
    upstream app {{
        server 127.0.0.1:{app_port};
    }}
    upstream flaky {{
        # The first server refuses connections: nginx retries the request on the second.
        server 127.0.0.1:{dead_port} max_fails=0;
        server 127.0.0.1:{app_port} max_fails=0;
    }}
    server {{
        listen 127.0.0.1:{{port}};
        server_name a.test b.test;
        {access_logs}
        location /cached/ {{
            proxy_pass http://app;
            proxy_cache test_cache;
            proxy_cache_valid 200 10m;
            add_header X-Cache $upstream_cache_status;
        }}
        location /app/ {{
            proxy_pass http://app;
        }}
        location /flaky/ {{
            proxy_pass http://flaky;
            proxy_next_upstream error timeout;
        }}
        location /static {{
            return 200 "static body\\n";
        }}
        location = /nginx_status {{
            stub_status;
            access_log off;
        }}
    }}
"""


def site_config(
    cache_dir: Path,
    log_path: Path,
    log_format: str,
    app_port: int,
    *,
    formats: str = "",
    more_logs: str = "",
) -> str:
    """The server block file: a caching proxy, a plain proxy, a retried upstream, static;
    `formats` defines more log formats, `more_logs` adds access_log lines."""
    return SITE_TEMPLATE.format(
        formats=formats,
        access_logs=f"access_log {log_path} {log_format};{more_logs}",
        quoted=QUOTED_FORMAT,
        json=JSON_FORMAT,
        cache_dir=cache_dir,
        app_port=app_port,
        dead_port=free_port(),
    )


class _App(BaseHTTPRequestHandler):
    """GET /…?ms=N sleeps N ms; ?status=N answers N; cacheable for a minute."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        time.sleep(int(query.get("ms", ["0"])[0]) / 1000)
        status = int(query.get("status", ["200"])[0])
        body = b"x" * int(query.get("size", ["100"])[0])
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=60")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@dataclass
class UpstreamApp:
    """The app nginx proxies to, in a thread of the test process."""

    server: ThreadingHTTPServer = field(init=False)
    thread: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _App)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        """Where it listens."""
        return int(self.server.server_address[1])

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


def request_plan(count: int) -> list[tuple[str, str, dict[str, str]]]:
    """A deterministic mix: cache hits and misses, slow and failing app calls, retries, 404s."""
    plan = []
    agents = ['curl/8.5 "quoted" agent', "Mozilla/5.0 (X11; Linux x86_64)", "-"]
    for number in range(count):
        host = "a.test" if number % 3 else "B.test"
        kind = number % 10
        if kind < 4:
            path = f"/cached/item{number % 25}?size={100 + number % 25}"
        elif kind < 6:
            path = f"/app/work?ms={number % 40}&size={number % 700}"
        elif kind == 6:
            path = f"/app/fail?status={(500, 503, 404)[number % 3]}"
        elif kind == 7:
            path = f"/flaky/x{number}"
        elif kind == 8:
            path = "/static"
        else:
            path = f"/nothing/{number}"
        headers = {"Host": host, "User-Agent": agents[number % len(agents)]}
        plan.append(("GET" if number % 17 else "HEAD", path, headers))
    return plan


def run_load(base_url: str, plan: list[tuple[str, str, dict[str, str]]], workers: int = 6) -> int:
    """Send every planned request (bounded, loopback); returns how many got an answer."""
    answered = 0
    lock = threading.Lock()

    def send(client: httpx.Client, item: tuple[str, str, dict[str, str]]) -> None:
        nonlocal answered
        method, path, headers = item
        client.request(method, base_url + path, headers=headers)
        with lock:
            answered += 1

    with (
        httpx.Client(timeout=10, trust_env=False) as client,
        ThreadPoolExecutor(max_workers=workers) as pool,
    ):
        list(pool.map(lambda item: send(client, item), plan))
    return answered


@dataclass
class Exact:
    """Figures computed line by line from log files, to compare the agent's with."""

    requests: Counter[str] = field(default_factory=Counter)
    status: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    cache: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    bytes_sent: Counter[str] = field(default_factory=Counter)
    get_2xx: Counter[str] = field(default_factory=Counter)
    request_times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    upstream_times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    attempts: Counter[str] = field(default_factory=Counter)
    attempt_errors: Counter[str] = field(default_factory=Counter)

    def add(self, fields: dict[str, str]) -> None:
        """Count one logged request."""
        site = fields["host"].lower()
        code = int(fields["status"])
        self.requests[site] += 1
        self.status[site][f"{code // 100}xx"] += 1
        if code in (499, 500, 502, 503, 504):
            self.status[site][str(code)] += 1
        if fields["cs"] not in ("-", ""):
            self.cache[site][fields["cs"]] += 1
        self.bytes_sent[site] += int(fields["bytes"])
        if fields["request"].split(" ")[0] in ("GET", "HEAD") and 200 <= code < 300:
            self.get_2xx[site] += 1
        self.request_times[site].append(float(fields["rt"]))
        times = [t for t in re.split(r", | : ", fields["urt"]) if t not in ("-", "")]
        if times:
            self.upstream_times[site].append(round(sum(float(t) for t in times), 3))
        addrs = [a for a in re.split(r", | : ", fields["ua"]) if a not in ("-", "")]
        statuses = re.split(r", | : ", fields["us"])
        for addr, status in zip(addrs, statuses, strict=False):
            self.attempts[addr] += 1
            if status.isdigit() and int(status) >= 500:
                self.attempt_errors[addr] += 1


_QUOTED_LINE = re.compile(
    r'^(?P<addr>\S+) - (?P<user>\S+) \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d+) '
    r'(?P<bytes>\d+) "(?P<referer>[^"]*)" "(?P<agent>[^"]*)" host=(?P<host>\S+) '
    r'rt=(?P<rt>[\d.]+) ua="(?P<ua>[^"]*)" us="(?P<us>[^"]*)" urt="(?P<urt>[^"]*)" '
    r"cs=(?P<cs>\S+)$"
)


def log_lines(paths: tuple[Path, ...], skip: int) -> list[str]:
    """The lines of the files in order, without the first `skip` ones (written before a test)."""
    return [line for path in paths for line in path.read_text(errors="replace").splitlines()][skip:]


def exact_from_quoted(*paths: Path, skip: int = 0) -> tuple[Exact, int]:
    """Exact figures of QUOTED_FORMAT lines, and how many lines there were."""
    exact, lines = Exact(), 0
    for line in log_lines(paths, skip):
        lines += 1
        match = _QUOTED_LINE.match(line)
        assert match, f"the test's own reading of a line failed: {line!r}"
        exact.add(match.groupdict())
    return exact, lines


def exact_from_json(*paths: Path, skip: int = 0) -> tuple[Exact, int]:
    """Exact figures of JSON_FORMAT lines, and how many lines there were."""
    exact, lines = Exact(), 0
    for line in log_lines(paths, skip):
        lines += 1
        record = json.loads(line)
        exact.add({key: str(value) for key, value in record.items()})
    return exact, lines


def probe_lines(log_path: Path, timeout_s: float = 5.0) -> int:
    """Lines nginx logged for the start-up probe (NginxInstance.start's GET /), once written.

    nginx logs a request after sending its response, so the probe's line may land a moment
    after the probe returned: wait for it, or a test would count it as its own traffic."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        lines = len(log_path.read_bytes().splitlines()) if log_path.exists() else 0
        if lines:
            return lines
        time.sleep(0.02)
    raise AssertionError(f"nginx logged no start-up probe in {log_path} within {timeout_s} s")
