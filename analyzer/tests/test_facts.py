"""Host facts and the metrics window built from what the agent and the backend send."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow

# A `facts` object as the agent pushes it (docs/agent-protocol.md), plus the per-sample limit.
AGENT_FACTS = {
    "nginx_version": "1.22.1",
    "nginx_openssl_version": "3.0.19",
    "nginx_configure_args": "--with-http_ssl_module --without-http_gzip_module",
    "nginx_modules": ["http_ssl_module", "http_v2_module"],
    "cpu_count": 4,
    "mem_total_bytes": 8 * 1024**3,
    "kernel": "6.1.0",
    "somaxconn": 4096,
    "os": "Debian GNU/Linux 12",
    "worker_fds_limit": 1024,
}


def test_host_facts_read_the_agents_facts_json() -> None:
    facts = HostFacts.from_dict(AGENT_FACTS)
    assert facts.nginx_version == (1, 22, 1)
    assert facts.openssl_version == (3, 0, 19)
    assert (facts.cpu_count, facts.mem_total_bytes, facts.somaxconn) == (4, 8 * 1024**3, 4096)
    assert facts.worker_nofile_limit == 1024
    assert "http_v2_module" in facts.modules
    assert "http_gzip_module" in facts.disabled_modules
    assert facts.modules_known


def test_host_facts_take_digit_strings_and_ignore_garbage() -> None:
    facts = HostFacts.from_dict({"cpu_count": "8", "worker_nofile_limit": 65535, "somaxconn": True})
    assert (facts.cpu_count, facts.worker_nofile_limit, facts.somaxconn) == (8, 65535, None)
    assert HostFacts.from_dict({"cpu_count": "many", "nginx_openssl_version": 3}) == HostFacts()
    assert HostFacts.from_dict(None) == HostFacts()


def test_metrics_window_nginx_cpu_figures() -> None:
    window = MetricsWindow.from_dict(
        {"nginx_cpu_pct_mean": 20, "nginx_cpu_pct_p95": 55.5, "nginx_cpu_source": "workers"}
    )
    assert window.sustained_nginx_cpu() == (55.5, "p95")
    assert window.nginx_cpu_evidence()["nginx_cpu_figure"] == (
        "p95 over the window, % of all cores, nginx workers"
    )
    assert MetricsWindow(nginx_cpu_pct_mean=20).sustained_nginx_cpu() == (20, "mean")
    assert MetricsWindow(cpu_pct=99).sustained_nginx_cpu() is None
    assert MetricsWindow.from_dict({"nginx_cpu_source": 5}).nginx_cpu_source is None


def test_host_facts_from_a_whole_push_body() -> None:
    payload = {
        "agent_id": "unenrolled",
        "facts": {"cpu_count": 2, "nginx_openssl_version": "1.1.1w"},
        "samples": [
            {"seq": 1, "nginx_processes": {"worker_fds_limit": 2048}},
            {"seq": 2, "nginx_processes": {"worker_fds_limit": 1024}},
        ],
    }
    facts = HostFacts.from_dict(payload)
    assert (facts.cpu_count, facts.worker_nofile_limit) == (2, 1024)
    assert facts.openssl_version == (1, 1, 1)
    # nginx down in the newest sample: no limit, the facts still count.
    payload["samples"] = [{"seq": 3, "nginx_processes": None}]
    assert HostFacts.from_dict(payload).worker_nofile_limit is None


def test_metrics_window_sustained_active_connections() -> None:
    window = MetricsWindow.from_dict({"peak_active": 900, "active_p95": 120, "avg_active": 80})
    assert window.sustained_active() == (120, "p95")
    assert MetricsWindow(peak_active=900, avg_active=80).sustained_active() == (80, "mean")
    # A peak alone is one spike: no sustained figure.
    assert MetricsWindow(peak_active=900).sustained_active() is None
