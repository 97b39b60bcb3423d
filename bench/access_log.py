"""Access-log parsing and aggregation: lines/s on one core for the demo's log format.

Generates a log in the format demo-cache writes (read from demo/nginx/demo-cache/nginx.conf with
the config engine, so the bench follows the demo), then times, in the same run and on the same
file: a plain line read (the floor), a regex-only pass (the format's compiled regex over the
file, nothing else), and the agent's whole path (AccessLogCollector: tail, parse, aggregate into
the interval's sites, upstreams and sketches). CPU time of this single-threaded process is
what is reported, so the figures are per core. Memory: the whole path runs in a child process
on the file and on a file four times larger; its peak RSS must not grow with the file.

Run: .venv/bin/python bench/access_log.py [--quick] [--lines N]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from nginx_fleet_agent.access_log.collector import AccessLogCollector
from nginx_fleet_agent.access_log.line_format import LineParser
from nginx_fleet_analyzer.access_logs import LogFormat, log_format
from nginx_fleet_analyzer.loader import parse_text

from harness.stats import verdict

ROOT = Path(__file__).resolve().parent.parent
DEMO_CONFIG = ROOT / "demo" / "nginx" / "demo-cache" / "nginx.conf"
TARGET_LINES_PER_S = 250_000
BUSY_HOST_REQ_PER_S = 20_000
# Peak RSS may grow this much from a file to one four times larger and still count as bounded.
RSS_GROWTH_LIMIT = 1.25
CHUNK = 1 << 20
T = TypeVar("T")


def demo_format() -> LogFormat:
    """The log format demo-cache's access_log writes, as nginx compiles it."""
    text = DEMO_CONFIG.read_text().replace("@PREFIX@", "/tmp").replace("@UPSTREAM_PORT@", "1")
    config = parse_text(text.replace("@LISTEN_PORT@", "2"))
    (access_log,) = [d for d in config.find("access_log") if d.args[0] != "off"]
    found = log_format(config, access_log.args[1])
    assert found is not None
    return found


def write_log(path: Path, lines: int, fmt: LogFormat, seed: int = 7) -> None:
    """`lines` lines of a caching proxy's traffic in `fmt`: hits, misses, statuses, timings."""
    rng = random.Random(seed)
    addrs = [f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"]
    addrs += [f"192.0.2.{n}" for n in range(1, 250)] + [f"2001:db8::{n:x}" for n in range(250)]
    paths = [f"/products/{n}" for n in range(300)]
    paths += ["/", "/cart", "/search?q=shoes", "/api/v1/items?page=2"]
    agents = ["Mozilla/5.0 (X11; Linux x86_64) Firefox/131.0", "curl/8.5.0", "Googlebot/2.1"]
    caches = ["HIT"] * 70 + ["MISS"] * 20 + ["EXPIRED"] * 5 + ["BYPASS"] * 3 + ["STALE", "-"]
    statuses = [200] * 90 + [304] * 4 + [404] * 3 + [500, 502, 499]
    upstreams = ["10.0.0.7:8080", "10.0.0.8:8080", "10.0.0.7:8080, 10.0.0.8:8080"]
    tokens = list(fmt.tokens())
    with path.open("w") as handle:
        buffer = []
        for number in range(lines):
            cache = rng.choice(caches)
            rt = 0.0 if cache == "HIT" and rng.random() < 0.6 else rng.lognormvariate(-4, 1.2)
            upstream = rng.choice(upstreams) if cache not in ("HIT", "STALE", "-") else "-"
            retried = ", " in upstream
            second = number // 2000
            values = {
                "remote_addr": rng.choice(addrs),
                "time_local": f"25/Nov/2026:10:{second // 60 % 60:02d}:{second % 60:02d} +0000",
                "request": f"GET {rng.choice(paths)} HTTP/1.1",
                "status": str(rng.choice(statuses)),
                "body_bytes_sent": str(int(rng.lognormvariate(8, 1))),
                "http_user_agent": rng.choice(agents),
                "host": rng.choice(("shop.example", "www.shop.example")),
                "request_time": f"{rt:.3f}",
                "upstream_cache_status": cache,
                "upstream_addr": upstream,
                "upstream_status": "-" if upstream == "-" else ("502, 200" if retried else "200"),
                "upstream_response_time": "-"
                if upstream == "-"
                else (f"0.001, {rt:.3f}" if retried else f"{max(rt - 0.001, 0):.3f}"),
            }
            buffer.append(
                "".join(
                    value if kind == "text" else values.get(value, "-") for kind, value in tokens
                )
                + "\n"
            )
            if len(buffer) == 10_000:
                handle.write("".join(buffer))
                buffer.clear()
        handle.write("".join(buffer))


def timed(action: Callable[[], T]) -> tuple[float, T]:
    """CPU seconds of this process spent in `action`, and what it returned."""
    start = time.process_time()
    result = action()
    return time.process_time() - start, result


def plain_read(path: Path) -> int:
    """The floor: every line read, nothing done with it."""
    count = 0
    with path.open("rb") as handle:
        for _ in handle:
            count += 1
    return count


def regex_only(path: Path, parser: LineParser) -> int:
    """The format's regex over the file in the agent's chunks, its matches counted."""
    matched = 0
    rest = b""
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            chunk = rest + chunk
            cut = chunk.rfind(b"\n") + 1
            matched += len(parser.parse(chunk[:cut]))
            rest = chunk[cut:]
    return matched


def dump_for(log_path: Path, fmt: LogFormat) -> str:
    """An `nginx -T` dump whose one server writes `log_path` in `fmt`."""
    quoted = fmt.text.replace("'", "\\'")
    return (
        "# configuration file /etc/nginx/nginx.conf:\n"
        f"http {{ log_format {fmt.name} '{quoted}';\n"
        f"  server {{ listen 80; access_log {log_path} {fmt.name}; }} }}\n"
    )


def grown_log(source: Path, workdir: Path, fmt: LogFormat) -> AccessLogCollector:
    """A collector tailing a log that grew by the whole source file since its last interval."""
    log_path = workdir / "access.log"
    log_path.write_bytes(b"")
    collector = AccessLogCollector()
    collector.use_config(dump_for(log_path, fmt))
    collector.collect()  # opens the (empty) log at its end, as a running agent would have
    with source.open("rb") as src, log_path.open("ab") as dst:
        while chunk := src.read(CHUNK * 8):
            dst.write(chunk)
    return collector


def drain(collector: AccessLogCollector) -> tuple[int, int]:
    """The agent's path: collect intervals until the log is read; requests and unparsed lines."""
    counted = unparsed = 0
    while True:
        interval = collector.collect()
        assert interval is not None
        (report,) = interval["files"]
        if not report["lines"]:
            break
        unparsed += report["unparsed"]
        counted += sum(site["requests"] for site in interval["sites"])
    collector.close()
    return counted, unparsed


def child_rss(path: Path, workdir: Path) -> int:
    """Peak RSS in bytes of a child process running the whole path on `path`."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path), "--workdir", str(workdir)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(json.loads(done.stdout.strip().splitlines()[-1])["peak_rss"])


def run_child(path: Path, workdir: Path) -> None:
    """--child: the whole path once, then print the peak RSS."""
    drain(grown_log(path, workdir, demo_format()))
    # VmHWM, not ru_maxrss: Linux carries a parent's larger peak over fork and exec into it.
    status = Path("/proc/self/status").read_text()
    (kib,) = [line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")]
    print(json.dumps({"peak_rss": int(kib) * 1024}))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="nginx-fleet access-log parsing benchmark")
    parser.add_argument("--quick", action="store_true", help="200,000 lines instead of 1,000,000")
    parser.add_argument("--lines", type=int, help="lines in the generated log")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        run_child(options.child, options.workdir)
        return 0
    lines = options.lines or (200_000 if options.quick else 1_000_000)
    fmt = demo_format()
    print(f"format {fmt.name} (demo-cache): {fmt.text}")
    with tempfile.TemporaryDirectory(prefix="nf-bench-log-") as tmp:
        work = Path(tmp)
        source = work / "source.log"
        write_log(source, lines, fmt)
        size = source.stat().st_size
        print(f"log: {lines:,} lines, {size / 1e6:.1f} MB ({size / lines:.0f} bytes/line)")
        line_parser = LineParser(fmt)
        floor_s, floor_n = timed(lambda: plain_read(source))
        regex_s, regex_n = timed(lambda: regex_only(source, line_parser))
        collector = grown_log(source, work, fmt)
        full_s, (counted, unparsed) = timed(lambda: drain(collector))
        rows = [
            ("plain line read (floor)", floor_s, floor_n),
            ("regex only", regex_s, regex_n),
            ("agent: tail + parse + aggregate", full_s, counted),
        ]
        print(f"\n{'pass':34} {'CPU s':>7} {'lines/s':>12} {'x floor':>8}")
        for label, seconds, count in rows:
            print(f"{label:34} {seconds:7.3f} {count / seconds:12,.0f} {seconds / floor_s:8.1f}")
        rate = counted / full_s
        print(f"\nagent vs regex only: {full_s / regex_s:.2f}x the regex pass's CPU")
        met = verdict(rate >= TARGET_LINES_PER_S)
        print(f"target >= {TARGET_LINES_PER_S:,} lines/s on one core: {rate:,.0f} {met}")
        share = BUSY_HOST_REQ_PER_S / rate * 100
        print(
            f"a host serving {BUSY_HOST_REQ_PER_S:,} req/s costs the agent {share:.1f}% of a "
            f"core (target < 10%): {verdict(share < 10)}"
        )
        big = work / "big.log"
        with big.open("wb") as dst:
            for _ in range(4):
                with source.open("rb") as src:
                    shutil.copyfileobj(src, dst, CHUNK * 8)
        small_rss, big_rss = child_rss(source, work), child_rss(big, work)
        growth = big_rss / small_rss
        print(
            f"peak RSS: {small_rss / 2**20:.1f} MiB for {size / 1e6:.0f} MB of log, "
            f"{big_rss / 2**20:.1f} MiB for {4 * size / 1e6:.0f} MB ({growth:.2f}x; bounded "
            f"if <= {RSS_GROWTH_LIMIT}x): {verdict(growth <= RSS_GROWTH_LIMIT)}"
        )
        ok = counted == lines == floor_n == regex_n and unparsed == 0
        print(f"check: every line parsed and counted once: {'OK' if ok else 'FAILED'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
