"""Proxy cache rules: each fires on its case and stays silent on a look-alike."""

from __future__ import annotations

from nginx_fleet_analyzer.facts import MetricsWindow
from nginx_fleet_analyzer.findings import Category

from tests.rule_checks import assert_rules_survive_directives_without_arguments, run

CACHED = """events {}
http {
    proxy_cache_path /var/cache/nginx keys_zone=app:10m%s;
%s
    server {
        listen 80;
        server_name a.example;
        location / {
            proxy_pass http://127.0.0.1:9000;
            proxy_cache app;
%s
        }
    }
}
"""

TWO_SITES = """events {}
http {
    proxy_cache_path /var/cache/nginx keys_zone=app:10m;
    proxy_cache app;
%s
    server {
        server_name a.example;
        location / {
            proxy_pass http://backend;
        }
    }
    server {
        server_name b.example;
        location / {
            proxy_pass http://backend;
        }
    }
}
"""


def cached(path_params: str = "", http: str = "", location: str = "") -> str:
    """A one-site cached proxy config with extra text in each place."""
    return CACHED % (path_params, http, location)


def test_c_key_host_fires_on_default_key_with_two_sites_one_upstream() -> None:
    [finding] = run("C-key-host", TWO_SITES % "")
    assert (finding.severity, finding.line) == ("error", 4)
    assert finding.evidence["server_names"] == ["a.example", "b.example"]
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.context, finding.fix.args) == (
        "add",
        "http",
        ["$scheme$request_method$host$request_uri"],
    )


def test_c_key_host_fires_on_explicit_key_without_host() -> None:
    [finding] = run("C-key-host", TWO_SITES % "    proxy_cache_key $scheme$request_uri;")
    assert finding.line == 5
    assert finding.fix is not None
    assert finding.fix.action == "set"


def test_c_key_host_silent_with_host_in_key_or_one_site() -> None:
    assert run("C-key-host", TWO_SITES % "    proxy_cache_key $scheme$host$request_uri;") == []
    assert run("C-key-host", cached()) == []


def test_c_no_valid_fires_and_adds_next_to_proxy_cache() -> None:
    [finding] = run("C-no-valid", cached())
    assert (finding.severity, finding.line) == ("warning", 10)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.args, finding.fix.context) == (
        "add",
        ["200", "301", "10m"],
        "location /",
    )
    assert "404 1m" in finding.fix.note


def test_c_no_valid_silent_with_valid_or_no_cache() -> None:
    assert run("C-no-valid", cached(http="    proxy_cache_valid 200 5m;")) == []
    assert run("C-no-valid", cached().replace("proxy_cache app;", "proxy_cache off;")) == []


def test_c_lock_fires_without_lock_and_silent_with_it() -> None:
    [finding] = run("C-lock", cached())
    assert finding.fix is not None
    assert (finding.line, finding.fix.args) == (10, ["on"])
    assert run("C-lock", cached(location="            proxy_cache_lock on;")) == []


def test_c_stale_fires_without_use_stale_and_silent_with_it() -> None:
    [finding] = run("C-stale", cached())
    assert finding.fix is not None
    assert finding.fix.args[:3] == ["error", "timeout", "updating"]
    assert "proxy_cache_background_update on" in finding.fix.note
    assert run("C-stale", cached(http="    proxy_cache_use_stale error timeout;")) == []


def test_c_temp_path_fires_and_silent_with_off() -> None:
    [finding] = run("C-temp-path", cached())
    assert (finding.severity, finding.line) == ("info", 3)
    assert finding.fix is not None
    assert finding.fix.args == ["/var/cache/nginx", "keys_zone=app:10m", "use_temp_path=off"]
    assert run("C-temp-path", cached(" use_temp_path=off")) == []


def test_c_zone_size_fires_when_keys_cannot_cover_max_size() -> None:
    [finding] = run("C-zone-size", cached(" max_size=10g"))
    assert (finding.severity, finding.line) == ("warning", 3)
    assert finding.evidence["keys_capacity"] == 80000
    assert finding.fix is not None
    assert "keys_zone=app:41m" in finding.fix.args


def test_c_zone_size_silent_when_zone_is_big_enough_or_unbounded() -> None:
    assert run("C-zone-size", cached(" max_size=1g")) == []
    assert run("C-zone-size", cached()) == []


def test_c_observable_fires_on_combined_log() -> None:
    [finding] = run("C-observable", cached())
    assert (finding.severity, finding.line) == ("warning", 3)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive) == ("add", "log_format")
    assert "$upstream_cache_status" in finding.fix.args[1]


def test_c_observable_extends_the_custom_format_in_use() -> None:
    log = "    log_format main '$remote_addr $status';\n    access_log /var/log/a.log main;"
    [finding] = run("C-observable", cached(http=log))
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.line) == ("set", 4)
    assert finding.fix.args[0] == "main"


def test_c_observable_silent_when_recorded_or_no_cache() -> None:
    log = (
        "    log_format main '$remote_addr ucs=$upstream_cache_status';\n"
        "    access_log /var/log/a.log main;"
    )
    assert run("C-observable", cached(http=log)) == []
    plain = "events {}\nhttp {\n    server {\n        listen 80;\n    }\n}\n"
    assert run("C-observable", plain) == []


APP = """events {}
http {
    server {
        listen 80;
        location / {
            fastcgi_pass unix:/run/php/php-fpm.sock;
%s
        }
    }
}
"""
MOSTLY_GETS = MetricsWindow(status_2xx_get_ratio=0.92)


def test_c_microcache_fires_on_uncached_app_serving_gets() -> None:
    [finding] = run("C-microcache", APP % "", metrics=MOSTLY_GETS)
    assert (finding.severity, finding.line) == ("info", 5)
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive) == ("none", "fastcgi_cache")


def test_c_microcache_silent_when_cached_mixed_or_unmeasured() -> None:
    assert run("C-microcache", APP % "            fastcgi_cache app;", metrics=MOSTLY_GETS) == []
    assert run("C-microcache", APP % "", metrics=MetricsWindow(status_2xx_get_ratio=0.4)) == []
    assert run("C-microcache", APP % "") == []


def test_c_hit_ratio_fires_below_half() -> None:
    [finding] = run("C-hit-ratio", cached(), metrics=MetricsWindow(cache_hit_ratio=0.3))
    assert (finding.severity, finding.line) == ("warning", 10)
    assert finding.evidence["zones"] == ["app"]
    assert finding.fix is not None
    assert (finding.fix.action, finding.fix.directive, finding.fix.line) == (
        "none",
        "proxy_cache",
        10,
    )


def test_c_hit_ratio_silent_when_high_unmeasured_or_uncached() -> None:
    assert run("C-hit-ratio", cached(), metrics=MetricsWindow(cache_hit_ratio=0.8)) == []
    assert run("C-hit-ratio", cached()) == []
    low = MetricsWindow(cache_hit_ratio=0.1)
    assert run("C-hit-ratio", APP % "", metrics=low) == []


def test_cache_rules_survive_directives_without_arguments() -> None:
    assert_rules_survive_directives_without_arguments(
        Category.CACHE, TWO_SITES % "    proxy_cache_key $uri;" + cached(" max_size=1g")
    )


PER_PLACE = """events {}
http {
    proxy_cache_path /var/cache/nginx keys_zone=pages:10m;
    fastcgi_cache_path /var/cache/php keys_zone=php:10m;
    server {
        listen 80;
        server_name shop.example;
        proxy_cache pages;
        location / {
            proxy_pass http://127.0.0.1:9000;
        }
        location /cart/ {
%s
            proxy_pass http://127.0.0.1:9000;
        }
        location ~ \\.php$ {
%s
            fastcgi_pass unix:/run/php/fpm.sock;
        }
    }
}
"""


def test_c_no_valid_inherited_cache_is_one_finding_and_off_disables_it() -> None:
    [finding] = run("C-no-valid", PER_PLACE % ("", ""))
    assert (finding.line, finding.evidence["places"]) == (
        8,
        ["server shop.example location /", "server shop.example location /cart/"],
    )
    [finding] = run("C-no-valid", PER_PLACE % ("            proxy_cache off;", ""))
    assert finding.evidence["places"] == ["server shop.example location /"]
    valid = PER_PLACE.replace(
        "proxy_cache pages;", "proxy_cache pages;\n        proxy_cache_valid 5m;"
    )
    assert run("C-no-valid", valid % ("", "")) == []


def test_c_no_valid_judges_fastcgi_caches_alike() -> None:
    [proxy, fastcgi] = run("C-no-valid", PER_PLACE % ("", "            fastcgi_cache php;"))
    assert (fastcgi.line, fastcgi.evidence["zone"]) == (17, "php")
    assert fastcgi.fix is not None
    assert fastcgi.fix.directive == "fastcgi_cache_valid"
    assert proxy.evidence["zone"] == "pages"
    keyed = "            fastcgi_cache php;\n            fastcgi_cache_valid 200 1m;"
    assert [f.evidence["zone"] for f in run("C-no-valid", PER_PLACE % ("", keyed))] == ["pages"]


def test_c_observable_reads_the_logs_written_where_the_cache_is_used() -> None:
    timed = (
        "    log_format cached '$remote_addr $status $upstream_cache_status';\n"
        "    access_log /var/log/nginx/access.log;\n"
    )
    text = PER_PLACE.replace("    server {\n", timed + "    server {\n", 1)
    per_server = text.replace(
        "proxy_cache pages;", "proxy_cache pages;\n        access_log /var/log/c.log cached;"
    )
    assert run("C-observable", per_server % ("", "")) == []
    [finding] = run("C-observable", text % ("", ""))
    assert finding.evidence["formats_in_use"] == ["combined"]


def test_c_lock_unset_for_many_servers_is_one_finding_at_http() -> None:
    sites = "".join(
        f"    server {{\n        server_name s{i}.example;\n        location / {{\n"
        "            proxy_cache pages;\n            proxy_pass http://127.0.0.1:9000;\n"
        "        }\n    }\n"
        for i in range(12)
    )
    text = (
        "events {}\nhttp {\n    proxy_cache_path /var/cache/nginx keys_zone=pages:10m;\n"
        + sites
        + "}\n"
    )
    [finding] = run("C-lock", text)
    assert finding.fix is not None
    assert (finding.line, finding.fix.context, len(finding.evidence["places"])) == (2, "http", 12)  # type: ignore[arg-type]
    one_off = text.replace("proxy_cache pages;", "proxy_cache pages;\n    proxy_cache_lock on;", 1)
    [finding] = run("C-lock", one_off)
    assert len(finding.evidence["places"]) == 11  # type: ignore[arg-type]
    assert run("C-lock", text.replace("http {\n", "http {\n    proxy_cache_lock on;\n", 1)) == []


def test_c_zone_size_is_info_when_only_the_assumed_object_size_decides() -> None:
    # 10m holds ~80,000 keys: too few for 3g of 32k objects, enough for objects above ~38k.
    [finding] = run("C-zone-size", cached(" max_size=3g"))
    assert finding.severity == "info" and "undecided" in finding.message
    # 10g overflows 80,000 keys unless objects average over 128k: surely too small.
    [sure] = run("C-zone-size", cached(" max_size=11g"))
    assert sure.severity == "warning"


MULTI = """events {}
http {
    proxy_cache_path /var/cache/nginx keys_zone=app:10m;
    upstream backend { server 127.0.0.1:8080; }
    server {
        listen 80;
        server_name %s;
        location / {
            proxy_cache app;
            proxy_set_header Host $host;
            proxy_pass http://backend;
        }
    }
%s}
"""


def test_c_key_host_error_for_several_servers_warning_for_aliases_of_one() -> None:
    other = MULTI.split("    server {", 1)[1].rsplit("}", 1)[0]
    two_servers = MULTI % ("a.example", "    server {" + other.replace("%s", "b.example"))
    [error] = run("C-key-host", two_servers)
    assert error.severity == "error"
    [alias] = run("C-key-host", MULTI % ("example.com www.example.com", ""))
    assert alias.severity == "warning" and "aliases" in alias.message


UNUSED_ZONE = """events {}
http {
    proxy_cache_path /var/cache/nginx/pages levels=1:2 keys_zone=pages:10m;
    server {
        listen 80;
        location / {
            proxy_pass http://127.0.0.1:8080;
%s
        }
    }
}
"""


def test_c_observable_silent_when_no_location_caches_with_the_zone() -> None:
    # A zone left over from an earlier setup: no cache runs, so no hit ratio to measure.
    assert run("C-observable", UNUSED_ZONE % "") == []
    assert run("C-observable", UNUSED_ZONE % "            proxy_cache off;") == []
    # Once a location caches with it, the combined log cannot tell hits from misses.
    [finding] = run("C-observable", UNUSED_ZONE % "            proxy_cache pages;")
    assert finding.line == 3


DOWNLOAD_CACHE = """events {}
http {
    proxy_cache_path /srv/cache levels=2:2 keys_zone=dl:100m max_size=500g;
    server {
        listen 80;
        location /files/ {
%s
            proxy_cache dl;
            proxy_pass http://mirror.internal;
        }
    }
}
"""


def test_c_zone_size_measures_against_the_slice_size_of_the_zones_users() -> None:
    # 100m of keys hold 800,000 entries: too few for 500g of 128k objects (about 4 million),
    # a sure overflow without slicing.
    [finding] = run("C-zone-size", DOWNLOAD_CACHE % "")
    assert finding.severity == "warning"
    # Sliced in 4m pieces, big downloads make 128,000 entries: the zone may well suffice, and
    # only the real mean size (small files are whole objects) decides.
    [finding] = run("C-zone-size", DOWNLOAD_CACHE % "            slice 4m;")
    assert finding.severity == "info"
    # A slice too small to change the picture leaves the warning.
    [finding] = run("C-zone-size", DOWNLOAD_CACHE % "            slice 64k;")
    assert finding.severity == "warning"
