"""Buffer and memory rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import HostFacts
from nginx_fleet_analyzer.findings import Category

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

PROXY = """worker_processes auto;
events {
    worker_connections 8192;
}
http {
%s
    server {
        listen 80;
        location / {
            proxy_pass http://127.0.0.1:9000;
        }
    }
}
"""
SMALL_HOST = HostFacts(cpu_count=2, mem_total_bytes=512 * 1024**2)
BIG_HOST = HostFacts(cpu_count=2, mem_total_bytes=64 * 1024**3)


def test_b_proxy_memory_fires_and_shrinks_explicit_buffers() -> None:
    # (16 x 64k + 4k) x 8192 x 2 = 16.1 GiB against 512 MiB.
    [finding] = run("B-proxy-memory", PROXY % "    proxy_buffers 16 64k;", SMALL_HOST)
    # Anchored at the directive the fix changes.
    assert (finding.severity, finding.line) == ("warning", 3)
    assert finding.evidence["worst_case_bytes"] == (16 * 65536 + 4096) * 8192 * 2
    assert finding.fix is not None
    # Even 2 buffers of 64k do not fit 16 KiB per connection: connections must go down.
    assert (finding.fix.directive, finding.fix.action) == ("worker_connections", "set")
    assert finding.fix.args == [str((256 * 1024**2) // ((16 * 65536 + 4096) * 2))]


def test_b_proxy_memory_reduces_buffer_count_when_that_fits() -> None:
    text = PROXY.replace("worker_connections 8192", "worker_connections 1024")
    facts = HostFacts(cpu_count=2, mem_total_bytes=2 * 1024**3)
    # (64 x 16k + 4k) x 1024 x 2 = 2 GiB, budget 1 GiB: 512 KiB per connection -> 31 x 16k.
    [finding] = run("B-proxy-memory", text % "    proxy_buffers 64 16k;", facts)
    assert finding.line == 6
    assert finding.fix is not None
    assert (finding.fix.directive, finding.fix.args) == ("proxy_buffers", ["31", "16k"])


def test_b_proxy_memory_without_memory_is_info_naming_the_facts() -> None:
    # (16 x 64k + 4k) x 8192 = 8 GiB per worker: big, but the host decides.
    [finding] = run("B-proxy-memory", PROXY % "    proxy_buffers 16 64k;")
    assert (finding.severity, finding.line) == ("info", 6)
    assert finding.evidence["needs"] == ["mem_total_bytes", "cpu_count"]
    assert "with the host's memory and the CPU count" in finding.message
    [finding] = run("B-proxy-memory", PROXY % "    proxy_buffers 16 64k;", HostFacts(cpu_count=2))
    assert finding.evidence["needs"] == ["mem_total_bytes"]
    # Defaults: 36 KiB x 8192 = 288 MiB per worker, too small to mention without facts.
    assert run("B-proxy-memory", PROXY % "") == []


def test_b_proxy_memory_counts_one_worker_at_least_without_cpu_count() -> None:
    # 'auto' with unknown cores: even one worker's 8 GiB is over half of 512 MiB.
    memory_only = HostFacts(mem_total_bytes=512 * 1024**2)
    [finding] = run("B-proxy-memory", PROXY % "    proxy_buffers 16 64k;", memory_only)
    assert finding.severity == "warning"
    assert finding.evidence["workers"] == 1


def test_b_proxy_memory_silent_on_big_host() -> None:
    assert run("B-proxy-memory", PROXY % "    proxy_buffers 16 64k;", BIG_HOST) == []
    # Defaults: (8 x 4k + 4k) x 8192 x 2 = 576 MiB, over half of 512 MiB.
    assert run("B-proxy-memory", PROXY % "", SMALL_HOST) != []
    assert (
        run("B-proxy-memory", PROXY % "", HostFacts(cpu_count=2, mem_total_bytes=2 * 1024**3)) == []
    )


def test_b_header_buffers_fires_below_default() -> None:
    [finding] = run("B-header-buffers", PROXY % "    large_client_header_buffers 2 4k;")
    assert (finding.severity, finding.line) == ("warning", 6)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("set", ["4", "8k"])


def test_b_header_buffers_silent_at_or_above_default() -> None:
    assert run("B-header-buffers", PROXY % "    large_client_header_buffers 4 8k;") == []
    assert run("B-header-buffers", PROXY % "    large_client_header_buffers 8 16k;") == []
    assert run("B-header-buffers", PROXY % "") == []


def test_b_body_buffer_fires_where_uploads_are_allowed() -> None:
    text = PROXY.replace(
        "proxy_pass http://127.0.0.1:9000;",
        "proxy_pass http://127.0.0.1:9000;\n            client_max_body_size 100m;",
    )
    [finding] = run("B-body-buffer", text % "")
    assert (finding.severity, finding.line) == ("info", 11)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.context) == (
        "add",
        ["128k"],
        "location /",
    )


def test_b_body_buffer_silent_with_buffer_or_small_bodies() -> None:
    uploads = "    client_max_body_size 0;\n    client_body_buffer_size 128k;"
    assert run("B-body-buffer", PROXY % uploads) == []
    assert run("B-body-buffer", PROXY % "    client_max_body_size 1m;") == []


def test_buffers_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(
        Category.BUFFERS, PROXY % "    proxy_buffers 16 64k;\n    client_max_body_size 0;"
    )
