"""Analysis engine benchmark: our parse and full analysis against crossplane and gixy.

Generates a ~5,000-line config (200 server blocks in conf.d/, written to disk and as an `nginx -T`
dump), then times, in the same run, the median of several repetitions of:
  ours:       parse of the dump, parse of the files on disk, parse + all rules on the dump
  crossplane: crossplane.parse() of the files on disk
  gixy:       gixy's full audit of the files on disk
crossplane and gixy (pinned, see peers.py) come from PyPI into bench/out/analysis/peers only
(created when missing); without them (no network, --no-peers) ours is measured alone.
The whole-process comparison on a 300-line file is whole_process.py.
Run from the repository root: .venv/bin/python bench/analysis/run.py [--quick] [--no-peers]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from nginx_fleet_analyzer.engine import analyze
from nginx_fleet_analyzer.loader import parse_dump, parse_path
from peers import OUT, ensure_peers
from peers import PYTHON as PEER_PYTHON

REPEATS = 7
TARGET_SECONDS = 0.3
SERVERS = 200

MAIN = """user www-data;
worker_processes 2;
pid /run/nginx.pid;
events {
    worker_connections 768;
}
http {
    sendfile on;
    tcp_nopush on;
    types_hash_max_size 2048;
    include mime.types;
    default_type application/octet-stream;
    ssl_protocols TLSv1 TLSv1.1 TLSv1.2;
    ssl_prefer_server_ciphers on;
    log_format main '$remote_addr - $remote_user [$time_local] "$request" '
                    '$status $body_bytes_sent "$http_referer" rt=$request_time';
    access_log /var/log/nginx/access.log main;
    error_log /var/log/nginx/error.log;
    gzip on;
    gzip_comp_level 9;
    proxy_cache_path /var/cache/nginx levels=1:2 keys_zone=app:10m max_size=1g;
    upstream backend {
        server 127.0.0.1:8001;
        server 127.0.0.1:8002;
        keepalive 32;
    }
    map $http_upgrade $connection_upgrade {
        default upgrade;
        '' close;
    }
    include conf.d/*.conf;
}
"""

MIME = (
    "types {\n"
    + "".join(
        f"    {kind}/{ext} {ext};\n"
        for kind in ("text", "image", "application", "font")
        for ext in ("html", "css", "js", "json", "png", "svg", "woff2", "xml", "pdf", "zip")
    )
    + "}\n"
)

SITE = """server {{
    listen 80;
    listen 443 ssl http2;
    server_name site{n}.example.com www.site{n}.example.com;
    ssl_certificate /etc/ssl/site{n}.pem;
    ssl_certificate_key /etc/ssl/site{n}.key;
    root /srv/site{n}/public;
    index index.html;
    add_header X-Frame-Options SAMEORIGIN;
    location / {{
        try_files $uri $uri/ @app;
    }}
    location ~* \\.(css|js|png|svg|woff2)$ {{
        expires 30d;
        access_log off;
    }}
    location @app {{
        proxy_pass http://backend;
        proxy_set_header Host $http_host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_cache app;
        proxy_read_timeout 30s;
    }}
    location /static/ {{ alias /srv/site{n}/static/; }}
}}
"""


def generate() -> tuple[Path, str, int]:
    """Write the config files and return (main file, its nginx -T dump, line count)."""
    conf = OUT / "conf"
    (conf / "conf.d").mkdir(parents=True, exist_ok=True)
    files = {conf / "nginx.conf": MAIN, conf / "mime.types": MIME}
    for n in range(SERVERS):
        files[conf / "conf.d" / f"site{n:03d}.conf"] = SITE.format(n=n)
    for path, text in files.items():
        path.write_text(text)
    dump = "".join(f"# configuration file {path}:\n{text}\n" for path, text in files.items())
    (OUT / "dump.txt").write_text(dump)
    return conf / "nginx.conf", dump, dump.count("\n")


def median_seconds(action: Callable[[], object], repeats: int = REPEATS) -> float:
    """Median wall time of `repeats` calls (after one warm-up)."""
    action()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


PEER_SCRIPT = """
import json, statistics, sys, time, logging
logging.disable(logging.CRITICAL)
import crossplane
from gixy.core.manager import Manager
from gixy.core.config import Config
main, repeats = sys.argv[1], int(sys.argv[2])
def cross():
    payload = crossplane.parse(main)
    assert payload["status"] == "ok", payload["errors"]
def gixy():
    with Manager(config=Config()) as manager:
        with open(main) as f:
            manager.audit(main, f)
        return list(manager.results)
def median(fn):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter(); fn(); times.append(time.perf_counter() - start)
    return statistics.median(times)
print(json.dumps({"crossplane_parse": median(cross), "gixy_audit": median(gixy),
                  "gixy_findings": len(gixy())}))
"""


def main() -> None:
    """Generate, measure and print the figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 runs each, for the harness test")
    parser.add_argument("--no-peers", action="store_true", help="skip crossplane and gixy")
    options = parser.parse_args()
    repeats = 2 if options.quick else REPEATS
    skipped = "--no-peers" if options.no_peers else ensure_peers()
    main_file, dump, lines = generate()
    config = parse_dump(dump)
    report = analyze(config)
    ours = {
        "parse_dump": median_seconds(lambda: parse_dump(dump), repeats),
        "parse_files": median_seconds(lambda: parse_path(main_file), repeats),
        "analyze_dump": median_seconds(lambda: analyze(parse_dump(dump)), repeats),
    }
    print(f"input: {lines} lines, {len(config.servers())} server blocks, {len(config.files)} files")
    print(f"ours: {len(report.findings)} findings, score {report.score.overall}")
    peers = None
    if skipped is None:
        peers = json.loads(
            subprocess.run(
                [str(PEER_PYTHON), "-c", PEER_SCRIPT, str(main_file), str(repeats)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        print(f"gixy: {peers['gixy_findings']} findings")
    print(f"median of {repeats} runs, in process:")
    print(f"  ours parse (dump)          {ours['parse_dump'] * 1000:8.1f} ms")
    print(f"  ours parse (files on disk) {ours['parse_files'] * 1000:8.1f} ms")
    if peers is not None:
        print(f"  crossplane parse (files)   {peers['crossplane_parse'] * 1000:8.1f} ms")
    print(f"  ours parse + all rules     {ours['analyze_dump'] * 1000:8.1f} ms")
    if peers is not None:
        print(f"  gixy audit (files)         {peers['gixy_audit'] * 1000:8.1f} ms")
        print("ratios:")
        ratio = ours["parse_files"] / peers["crossplane_parse"]
        print(f"  ours parse / crossplane parse: {ratio:.2f}x")
        ratio = peers["gixy_audit"] / ours["analyze_dump"]
        print(f"  gixy audit / ours analysis:    {ratio:.1f}x faster")
    else:
        print(f"crossplane, gixy: not measured ({skipped})")
    met = "met" if ours["analyze_dump"] < TARGET_SECONDS else "NOT MET"
    print(f"target full analysis < {TARGET_SECONDS} s: {met}")


if __name__ == "__main__":
    main()
