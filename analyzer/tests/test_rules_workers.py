"""Workers and connections rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from nginx_fleet_analyzer.findings import Category

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

FOUR_CPUS = HostFacts(cpu_count=4)


def test_w_processes_fires_on_fixed_count_below_cores() -> None:
    text = "worker_processes 2;\nevents {}\n"
    [finding] = run("W-processes", text, FOUR_CPUS)
    assert (finding.rule, finding.severity, finding.line) == ("W-processes", "warning", 1)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.line) == ("set", ["auto"], 1)
    assert finding.evidence["cpu_count"] == 4
    assert finding.doc_url.endswith("ngx_core_module.html#worker_processes")


def test_w_processes_fires_on_default_single_worker() -> None:
    [finding] = run("W-processes", "user www-data;\nevents {}\n", FOUR_CPUS)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context) == ("add", "main")
    assert finding.evidence["default_used"] is True


def test_w_processes_silent_on_auto_or_enough() -> None:
    assert run("W-processes", "worker_processes auto;\nevents {}\n", FOUR_CPUS) == []
    assert run("W-processes", "worker_processes 4;\nevents {}\n", FOUR_CPUS) == []
    assert run("W-processes", "worker_processes auto;\nevents {}\n") == []


def test_w_processes_without_cpu_count_is_info_naming_the_fact() -> None:
    [finding] = run("W-processes", "worker_processes 2;\nevents {}\n")
    assert finding.severity == "info"
    assert "with the host's CPU count this becomes a warning" in finding.message
    assert finding.evidence["needs"] == "cpu_count"
    # A site file read alone has no main context to judge.
    assert run("W-processes", "http {\n    server {\n        listen 80;\n    }\n}\n") == []


def test_w_processes_evidence_says_how_busy_the_workers_were() -> None:
    busy = MetricsWindow(
        nginx_cpu_pct_p95=45.0, nginx_cpu_pct_mean=30.0, nginx_cpu_source="workers"
    )
    [finding] = run("W-processes", "worker_processes 2;\nevents {}\n", FOUR_CPUS, busy)
    # 45% of 4 cores spread over 2 workers: each worker's core 90% busy.
    assert finding.evidence["workers_busy_pct"] == 90.0
    assert (
        finding.evidence["nginx_cpu_figure"] == "p95 over the window, % of all cores, nginx workers"
    )
    assert "90% busy" in finding.message
    [finding] = run("W-processes", "worker_processes 2;\nevents {}\n", FOUR_CPUS, MetricsWindow())
    assert finding.evidence["nginx_cpu_pct"] is None
    assert str(finding.evidence["nginx_cpu_figure"]).startswith("not reported")


def test_w_connections_fires_on_small_limit_with_several_cores() -> None:
    text = "events {\n    worker_connections 768;\n}\n"
    [finding] = run("W-connections", text, FOUR_CPUS)
    assert finding.line == 2
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("set", ["4096"])


def test_w_connections_uses_the_512_default_and_the_sustained_load() -> None:
    text = "worker_processes 1;\nevents {\n}\n"
    metrics = MetricsWindow(peak_active=900, active_p95=300, avg_active=120)
    [finding] = run("W-connections", text, HostFacts(cpu_count=1), metrics)
    assert (finding.line, finding.severity) == (2, "warning")
    assert finding.evidence["worker_connections"] == 512
    assert finding.evidence["active_connections"] == 300
    assert finding.evidence["active_figure"] == "p95 over the window"
    assert "300 active connections sustained over the window (p95" in finding.message
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context, finding.fix.args) == (
        "add",
        "events",
        ["4096"],
    )


def test_w_connections_judges_the_mean_when_the_window_is_too_short_for_a_p95() -> None:
    text = "worker_processes 1;\nevents {\n}\n"
    metrics = MetricsWindow(peak_active=600, avg_active=200)
    [finding] = run("W-connections", text, HostFacts(cpu_count=1), metrics)
    assert finding.evidence["active_figure"] == "mean over the window"
    assert "200 active connections sustained over the window (mean" in finding.message


def test_w_connections_ignores_a_single_spike() -> None:
    # 2 x 1024 slots: below 4x the one peak of 900, well above 4x the sustained 100.
    text = "worker_processes 2;\nevents {\n    worker_connections 1024;\n}\n"
    spike = MetricsWindow(peak_active=900, active_p95=100, avg_active=60)
    assert run("W-connections", text, HostFacts(cpu_count=1), spike) == []
    # Only a peak (no sustained figure) decides nothing either.
    assert run("W-connections", text, HostFacts(cpu_count=1), MetricsWindow(peak_active=900)) == []
    sustained = MetricsWindow(peak_active=900, active_p95=800, avg_active=600)
    [finding] = run("W-connections", text, HostFacts(cpu_count=1), sustained)
    assert finding.fix is not None and finding.fix.args == ["4096"]


def test_w_connections_silent_when_capacity_is_enough() -> None:
    text = "worker_processes 1;\nevents {\n    worker_connections 4096;\n}\n"
    assert run("W-connections", text, FOUR_CPUS, MetricsWindow(active_p95=300)) == []
    # Single core, 512 slots, small load: nothing to gain.
    assert (
        run("W-connections", "events {}\n", HostFacts(cpu_count=1), MetricsWindow(active_p95=20))
        == []
    )
    assert run("W-connections", "events {\n    worker_connections 2048;\n}\n") == []


def test_w_connections_cores_part_without_cpu_count_is_info() -> None:
    [finding] = run("W-connections", "events {\n    worker_connections 768;\n}\n")
    assert (finding.severity, finding.line) == ("info", 2)
    assert "with the host's CPU count" in finding.message
    # The peak part needs no host fact: still a warning.
    text = "worker_processes 1;\nevents {\n    worker_connections 768;\n}\n"
    [finding] = run("W-connections", text, metrics=MetricsWindow(active_p95=300))
    assert finding.severity == "warning"


def test_w_nofile_fires_when_missing_and_is_an_error_with_drops() -> None:
    text = "worker_processes auto;\nevents {\n    worker_connections 4096;\n}\n"
    [finding] = run("W-nofile", text)
    # The inherited limit is unknown without the workers' real Max open files.
    assert finding.severity == "info"
    assert finding.evidence["needs"] == "worker_nofile_limit"
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.args, finding.fix.context) == (
        "add",
        "worker_rlimit_nofile",
        ["65535"],
        "main",
    )
    drops = MetricsWindow(accepts_delta=1000, handled_delta=900)
    [finding] = run("W-nofile", text, metrics=drops)
    assert finding.severity == "warning"
    assert finding.evidence["drops"] == 100
    [finding] = run("W-nofile", text, HostFacts(worker_nofile_limit=1024), drops)
    assert finding.severity == "error"
    [finding] = run("W-nofile", text, HostFacts(worker_nofile_limit=1024))
    assert finding.severity == "warning"
    # Site files alone have no main context: nothing to say about the workers.
    assert run("W-nofile", "http {\n    server {\n        listen 80;\n    }\n}\n") == []


def test_w_nofile_fires_on_low_configured_or_real_limit() -> None:
    text = "worker_rlimit_nofile 2048;\nevents {\n    worker_connections 4096;\n}\n"
    [finding] = run("W-nofile", text)
    assert finding.line == 1
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args) == ("set", ["65535"])
    text = "events {\n    worker_connections 4096;\n}\n"
    [finding] = run("W-nofile", text, HostFacts(worker_nofile_limit=1024))
    assert finding.evidence["worker_max_open_files"] == 1024


def test_w_nofile_silent_when_limits_cover_connections() -> None:
    text = "worker_rlimit_nofile 65535;\nevents {\n    worker_connections 4096;\n}\n"
    assert run("W-nofile", text) == []
    text = "events {\n    worker_connections 512;\n}\n"
    assert run("W-nofile", text, HostFacts(worker_nofile_limit=65535)) == []


def test_w_drops_names_worker_connections_when_it_binds() -> None:
    text = "worker_rlimit_nofile 65535;\nevents {\n    worker_connections 16;\n}\n"
    metrics = MetricsWindow(accepts_delta=124070, handled_delta=34686)
    [finding] = run("W-drops", text, metrics=metrics)
    assert (finding.severity, finding.line) == ("error", 3)
    assert finding.evidence["binding_limit"] == "worker_connections"
    assert finding.evidence["drops"] == 124070 - 34686
    assert finding.fix is not None
    assert (finding.fix.directive, finding.fix.action) == ("worker_connections", "set")


def test_w_drops_names_the_fd_limit_when_it_binds() -> None:
    text = "events {\n    worker_connections 4096;\n}\n"
    metrics = MetricsWindow(accepts_delta=500, handled_delta=400)
    [finding] = run("W-drops", text, HostFacts(worker_nofile_limit=1024), metrics)
    assert finding.evidence["binding_limit"] == "worker_rlimit_nofile"
    assert finding.fix is not None
    assert (finding.fix.directive, finding.fix.args) == ("worker_rlimit_nofile", ["65535"])


def test_w_drops_silent_without_drops_or_metrics() -> None:
    text = "events {\n    worker_connections 16;\n}\n"
    assert run("W-drops", text, metrics=MetricsWindow(accepts_delta=50, handled_delta=50)) == []
    assert run("W-drops", text) == []


def test_w_epoll_notes_the_line_without_recommending_it() -> None:
    [finding] = run("W-epoll", "events {\n    use epoll;\n}\n")
    assert (finding.severity, finding.line) == ("info", 2)
    assert finding.fix is not None
    assert finding.fix.action == "none"


def test_w_epoll_silent_when_absent_or_other_method() -> None:
    assert run("W-epoll", "events {\n    # use epoll;\n    use poll;\n}\n") == []
    # Never recommend adding it.
    assert run("W-epoll", "events {}\n", FOUR_CPUS) == []


MULTI_ACCEPT = """worker_processes 4;
events {
    multi_accept on;
}
http {
    server {
        listen 80%s;
    }
}
"""


def test_w_multi_accept_fires_without_reuseport() -> None:
    [finding] = run("W-multi-accept", MULTI_ACCEPT % "")
    assert finding.line == 3
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.line, finding.fix.args) == (
        "set",
        7,
        ["80", "reuseport"],
    )


def test_w_multi_accept_silent_with_reuseport_or_one_worker() -> None:
    assert run("W-multi-accept", MULTI_ACCEPT % " reuseport") == []
    assert (
        run(
            "W-multi-accept",
            (MULTI_ACCEPT % "").replace("worker_processes 4", "worker_processes 1"),
        )
        == []
    )


BACKLOG = """http {
    server {
        listen 80%s;
    }
}
"""


def test_w_backlog_fires_on_listen_overflows() -> None:
    metrics = MetricsWindow(listen_overflows_delta=120, listen_drops_delta=120)
    [finding] = run("W-backlog", BACKLOG % "", HostFacts(somaxconn=4096), metrics)
    assert (finding.severity, finding.line) == ("warning", 3)
    assert finding.evidence["backlog"] == 511
    assert finding.fix is not None
    assert finding.fix.args == ["80", "backlog=4096"]
    [finding] = run("W-backlog", BACKLOG % " backlog=4096", metrics=metrics)
    assert finding.fix is not None
    assert finding.fix.args == ["80", "backlog=8192"]
    assert "somaxconn >= 8192" in finding.fix.note


def test_w_backlog_silent_without_overflows() -> None:
    quiet = MetricsWindow(listen_overflows_delta=0, listen_drops_delta=0)
    assert run("W-backlog", BACKLOG % "", metrics=quiet) == []
    assert run("W-backlog", BACKLOG % "") == []


def test_workers_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(Category.WORKERS, MULTI_ACCEPT % "")


STREAM_ONLY = """worker_rlimit_nofile 9000;
events {
    worker_connections 8192;
}
http {
    server {
        listen 127.0.0.1:8081;
        location = /healthz { return 200; }
        location /status { stub_status; }
        location / { return 404; }
    }
}
stream {
    upstream db { server 10.0.0.5:5432; }
    server {
        listen 5432;
        proxy_pass db;
    }
}
"""


def test_w_nofile_needs_one_fd_per_connection_where_nothing_is_sent_from_files() -> None:
    # worker_connections counts the upstream side of each proxied stream too: 9000 fds cover
    # 8192 connections when no response is read from a file.
    assert run("W-nofile", STREAM_ONLY) == []
    [finding] = run("W-nofile", STREAM_ONLY.replace("9000", "4096"))
    assert "below worker_connections (8192)" in finding.message
    assert finding.evidence["files_per_connection"] is False
    # The look-alike: a site serving static files holds a file per busy connection.
    static = STREAM_ONLY.replace("location / { return 404; }", "location / { root /srv/www; }")
    [finding] = run("W-nofile", static)
    assert "below 2 x worker_connections (16384)" in finding.message
    # So does a buffered HTTP proxy (temp files), unless buffering is off.
    proxied = STREAM_ONLY.replace(
        "location / { return 404; }", "location / { proxy_pass http://10.0.0.7; }"
    )
    assert len(run("W-nofile", proxied)) == 1
    unbuffered = proxied.replace("proxy_pass", "proxy_buffering off; proxy_pass")
    assert run("W-nofile", unbuffered) == []
