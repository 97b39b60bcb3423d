"""Compression rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from nginx_fleet_analyzer.findings import Category

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

SITE = """events {}
http {
%s
    server {
        listen 80;
        root /srv/www;
        location / {
            try_files $uri =404;
        }
    }
}
"""

GOOD_GZIP = """    gzip on;
    gzip_vary on;
    gzip_min_length 1024;
    gzip_types text/css application/javascript application/json image/svg+xml;"""


def test_g_off_fires_when_gzip_is_never_enabled() -> None:
    [finding] = run("G-off", SITE % "")
    assert (finding.severity, finding.line) == ("warning", 2)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.context) == ("add", ["on"], "http")
    assert "application/json" in finding.fix.note


def test_g_off_fires_on_server_that_turns_it_off() -> None:
    text = (SITE % "    gzip on;").replace("root /srv/www;", "root /srv/www;\n        gzip off;")
    [finding] = run("G-off", text)
    assert finding.line == 7
    assert finding.fix is not None
    assert finding.fix.action == "set"


def test_g_off_silent_when_on_or_redirect_only() -> None:
    assert run("G-off", SITE % "    gzip on;") == []
    redirect = (
        "events {}\nhttp {\n    server {\n        listen 80;\n"
        "        return 301 https://$host$request_uri;\n    }\n}\n"
    )
    assert run("G-off", redirect) == []


def test_g_level_fires_above_6() -> None:
    [finding] = run("G-level", SITE % "    gzip on;\n    gzip_comp_level 9;")
    assert (finding.severity, finding.line) == ("warning", 4)
    assert finding.fix is not None
    assert finding.fix.args == ["5"]


def nginx_cpu(p95: float | None, mean: float, host: float | None = None) -> MetricsWindow:
    return MetricsWindow(
        nginx_cpu_pct_p95=p95, nginx_cpu_pct_mean=mean, nginx_cpu_source="workers", cpu_pct=host
    )


def test_g_level_is_stricter_when_nginx_is_cpu_bound() -> None:
    text = SITE % "    gzip on;\n    gzip_comp_level 6;"
    assert run("G-level", text, metrics=nginx_cpu(40, 30)) == []
    [finding] = run("G-level", text, metrics=nginx_cpu(85, 72))
    assert finding.severity == "warning"
    assert finding.evidence["nginx_cpu_pct"] == 85
    assert (
        finding.evidence["nginx_cpu_figure"] == "p95 over the window, % of all cores, nginx workers"
    )
    assert "nginx used 85% of the host's CPU (p95" in finding.message
    assert finding.fix is not None
    assert finding.fix.args == ["4"]
    # Fewer samples than a p95 needs: the mean decides, and says so.
    [finding] = run("G-level", text, metrics=nginx_cpu(None, 75))
    assert "(mean over the window" in finding.message


def test_g_level_ignores_the_hosts_cpu_when_nginx_is_light() -> None:
    text = SITE % "    gzip on;\n    gzip_comp_level 6;"
    # The host is busy with something else: gzip is not what costs the CPU.
    assert run("G-level", text, metrics=nginx_cpu(12, 8, host=95)) == []
    # Without nginx's own figure, a busy host is only a note that names the missing figure.
    [finding] = run("G-level", text, metrics=MetricsWindow(cpu_pct=95))
    assert finding.severity == "info"
    assert "nginx's own share was not reported" in finding.message
    assert run("G-level", text, metrics=MetricsWindow(cpu_pct=40)) == []


def test_g_level_silent_at_5_or_default() -> None:
    assert run("G-level", SITE % "    gzip on;\n    gzip_comp_level 5;") == []
    assert run("G-level", SITE % "    gzip on;") == []


def test_g_min_length_fires_on_default_next_to_gzip_on() -> None:
    [finding] = run("G-min-length", SITE % "    gzip on;")
    assert (finding.severity, finding.line) == ("info", 2)
    assert finding.evidence["gzip_min_length"] == "20 (default)"
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.context) == (
        "add",
        ["1024"],
        "http",
    )
    [finding] = run("G-min-length", SITE % "    gzip on;\n    gzip_min_length 100;")
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (4, "set")


def test_g_min_length_silent_when_large_enough_or_gzip_off() -> None:
    assert run("G-min-length", SITE % GOOD_GZIP) == []
    assert run("G-min-length", SITE % "    gzip_min_length 10;") == []


def test_g_types_fires_on_missing_and_compressed_types() -> None:
    [finding] = run("G-types", SITE % "    gzip on;\n    gzip_types text/css image/png;")
    assert finding.line == 4
    assert finding.evidence["missing"] == [
        "application/javascript",
        "application/json",
        "image/svg+xml",
    ]
    assert finding.evidence["compressed"] == ["image/png"]
    assert finding.fix is not None
    assert finding.fix.args == [
        "text/css",
        "application/javascript",
        "application/json",
        "image/svg+xml",
    ]


def test_g_types_fires_on_default_text_html_only() -> None:
    [finding] = run("G-types", SITE % "    gzip on;")
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context) == ("add", "http")


def test_g_types_silent_on_a_good_list() -> None:
    good = (
        "    gzip on;\n"
        "    gzip_types text/plain text/css text/javascript application/json image/svg+xml;"
    )
    assert run("G-types", SITE % good) == []


def test_g_vary_fires_when_off_and_silent_when_on() -> None:
    [finding] = run("G-vary", SITE % "    gzip on;")
    assert finding.fix is not None
    assert (finding.line, finding.fix.action, finding.fix.args) == (2, "add", ["on"])
    assert run("G-vary", SITE % "    gzip on;\n    gzip_vary on;") == []
    assert run("G-vary", SITE % "    gzip_vary off;") == []


PROXIED = SITE.replace("try_files $uri =404;", "proxy_pass http://127.0.0.1:9000;")


def test_g_proxied_fires_on_proxying_server() -> None:
    [finding] = run("G-proxied", PROXIED % "    gzip on;")
    assert finding.fix is not None
    assert (finding.line, finding.fix.args) == (2, ["any"])
    [finding] = run("G-proxied", PROXIED % "    gzip on;\n    gzip_proxied off;")
    assert finding.fix is not None
    assert (finding.line, finding.fix.action) == (4, "set")


def test_g_proxied_silent_when_set_or_not_proxying() -> None:
    assert run("G-proxied", PROXIED % "    gzip on;\n    gzip_proxied any;") == []
    assert run("G-proxied", SITE % "    gzip on;") == []


WITH_STATIC_MODULE = HostFacts(modules=frozenset({"http_gzip_static_module"}), modules_known=True)


def test_g_static_fires_when_the_module_is_built() -> None:
    [finding] = run("G-static", SITE % "    gzip on;", WITH_STATIC_MODULE)
    assert finding.fix is not None
    assert (finding.line, finding.fix.action, finding.fix.args) == (2, "add", ["on"])


def test_g_static_silent_without_module_or_when_on() -> None:
    assert run("G-static", SITE % "    gzip on;") == []
    assert run("G-static", SITE % "    gzip on;", HostFacts(modules_known=True)) == []
    assert run("G-static", SITE % "    gzip_static on;", WITH_STATIC_MODULE) == []
    assert run("G-static", PROXIED % "", WITH_STATIC_MODULE) == []


def test_compression_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(
        Category.COMPRESSION, PROXIED % "    gzip on;\n    gzip_types text/css;"
    )


MIXED = """events {}
http {
    gzip on;
    gzip_vary on;
    gzip_min_length 1024;
    server {
        listen 80;
        server_name app.example;
        root /srv/app;
        location / {
            proxy_pass http://127.0.0.1:3000;
        }
        location /files/ {
%s
        }
    }
    server {
        listen 80;
        server_name admin.example;
        location / {
            deny all;
        }
    }
}
"""


def test_g_off_ignores_servers_that_only_deny_or_redirect() -> None:
    closed = (
        "events {}\nhttp {\n    server {\n        listen 80;\n"
        "        location / {\n            deny all;\n        }\n"
        "        location /old/ {\n            rewrite ^ https://new.example/ permanent;\n"
        "        }\n    }\n}\n"
    )
    assert run("G-off", closed) == []
    opened = closed.replace("deny all;", "root /srv;")
    [finding] = run("G-off", opened)
    assert finding.evidence["places"] == ["server location /"]


def test_g_off_silent_for_a_deliberate_location_off_but_fires_for_a_server_off() -> None:
    assert run("G-off", MIXED % "            gzip off;") == []
    server_off = MIXED.replace("root /srv/app;", "root /srv/app;\n        gzip off;")
    [finding] = run("G-off", server_off % "            gzip on;")
    assert (finding.line, finding.evidence["places"]) == (10, ["server app.example location /"])


def test_g_types_one_finding_per_cause_for_every_place_using_the_default() -> None:
    [finding] = run("G-types", MIXED % "")
    # The places on the default list share one `gzip on` (in http): one finding, added there.
    assert finding.line == 2
    assert finding.evidence["places"] == [
        "server app.example location /",
        "server app.example location /files/",
    ]


def test_g_types_judges_a_location_that_overrides_the_list() -> None:
    good = "    gzip_types text/css application/javascript application/json image/svg+xml;\n"
    text = MIXED.replace("    gzip on;\n", "    gzip on;\n" + good)
    assert run("G-types", text % "") == []
    [finding] = run("G-types", text % "            gzip_types text/css image/png;")
    assert (finding.line, finding.evidence["compressed"]) == (15, ["image/png"])


def test_g_proxied_only_for_locations_that_proxy() -> None:
    [finding] = run("G-proxied", MIXED % "")
    assert finding.evidence["places"] == ["server app.example location /"]
    static = MIXED.replace("proxy_pass http://127.0.0.1:3000;", "try_files $uri =404;")
    assert run("G-proxied", static % "") == []


def test_g_off_ignores_grpc_only_servers() -> None:
    grpc = MIXED.replace("proxy_pass http://127.0.0.1:3000;", "grpc_pass grpc://127.0.0.1:50051;")
    text = grpc.replace("    gzip on;\n", "") % "            deny all;"
    assert run("G-off", text) == []
    assert len(run("G-off", MIXED.replace("    gzip on;\n", "") % "")) == 1


def test_g_off_ignores_internal_locations_and_loopback_only_servers() -> None:
    only_404 = """events {}
http {
    server {
        listen 80 default_server;
        location / { return 404; }
        location = /404.html { internal; }
    }
    server {
        listen 127.0.0.1:9000;
        location = /auth { proxy_pass http://127.0.0.1:9001; }
    }
}
"""
    assert run("G-off", only_404) == []
    # The same endpoint reachable from the network does send text uncompressed.
    public = only_404.replace("listen 127.0.0.1:9000;", "listen 9000;")
    [finding] = run("G-off", public)
    assert "location = /auth" in finding.message


MEDIA = """events {}
http {
    types {
        text/html html;
        text/css css;
        video/mp4 mp4;
    }
    default_type application/octet-stream;
    server {
        listen 80;
        location /segments/ {
            root /srv/media;
            types {
%s
            }
        }
        location / {
            return 404;
        }
    }
}
"""


def test_g_off_silent_where_a_location_maps_only_media_types() -> None:
    # HLS segments and playlists: no type gzip would compress is ever sent from here.
    hls = "                application/vnd.apple.mpegurl m3u8;\n                video/mp2t ts;"
    assert run("G-off", MEDIA % hls) == []
    # The look-alike: the location's map also has a text type, so text can go out.
    dash = hls + "\n                application/xml mpd;"
    [finding] = run("G-off", MEDIA % dash)
    assert "location /segments/" in finding.message
    # So does a text default_type for files the map does not name.
    text_default = (MEDIA % hls).replace(
        "default_type application/octet-stream;", "default_type text/plain;"
    )
    assert len(run("G-off", text_default)) == 1
