"""The generated directive table: complete for nginx's own modules, labelled for third-party ones,
and in agreement with a real nginx binary on where directives may go."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from nginx_fleet_analyzer import directive_data
from nginx_fleet_analyzer.arguments import argument_problem, arity_ok
from nginx_fleet_analyzer.directives import (
    FIRST_RELEASE,
    LAST_RELEASE,
    OPTIONAL_MODULES,
    Spec,
    doc_url,
    is_known,
    specs,
    table,
)
from nginx_fleet_analyzer.facts import HostFacts
from nginx_fleet_analyzer.findings import Finding
from nginx_fleet_analyzer.loader import parse_auto, parse_text
from nginx_fleet_analyzer.rules import RuleContext, get_rule

VALIDITY = ("V-unknown", "V-context", "V-args", "V-dup")


def findings(text: str, facts: HostFacts | None = None) -> list[Finding]:
    config = parse_text(text)
    out: list[Finding] = []
    for rule_id in VALIDITY:
        out.extend(get_rule(rule_id).check(RuleContext(config=config, facts=facts)))
    return out


def only(spec_list: tuple[Spec, ...], module: str) -> Spec:
    [spec] = [s for s in spec_list if s.module == module]
    return spec


def test_header_names_the_releases_and_the_third_party_commits() -> None:
    assert FIRST_RELEASE == (1, 0, 0) and LAST_RELEASE >= (1, 27, 0)
    assert len(directive_data.RELEASES.split()) > 200
    packages = {p.split()[0] for p in directive_data.PACKAGES}
    assert {"ngx_brotli", "headers-more-nginx-module", "njs", "lua-nginx-module"} <= packages
    assert all(len(p.split()[1]) == 40 for p in directive_data.PACKAGES)
    assert "gen_directive_table.py" in (directive_data.__doc__ or "")


def test_families_that_used_to_be_unknown_are_known() -> None:
    for name in (
        "scgi_cache",
        "scgi_buffering",
        "scgi_request_buffering",
        "uwsgi_cache_lock",
        "uwsgi_ssl_verify",
        "fastcgi_cache_lock_timeout",
        "fastcgi_request_buffering",
        "ssi_silent_errors",
        "ssi_types",
        "geoip_country",
        "geoip_proxy_recursive",
        "mp4_max_buffer_size",
        "image_filter_jpeg_quality",
        "xslt_stylesheet",
        "ssl_preread",
        "proxy_protocol_timeout",
        "smtp_greeting_delay",
        "imap_auth",
        "http2_max_concurrent_streams",
        "quic_retry",
        "http3_hq",
        "epoll_events",
        "google_perftools_profiles",
    ):
        assert is_known(name), name


def test_rows_carry_the_source_facts() -> None:
    sendfile = only(specs("sendfile"), "http_core_module")
    assert (sendfile.contexts, sendfile.args) == ("http srv loc lif", "flag")
    assert sendfile.repeat is False
    # size/time/number kinds come from the stock setter the module uses.
    assert only(specs("scgi_buffer_size"), "http_scgi_module").kind == "size"
    assert only(specs("uwsgi_read_timeout"), "http_uwsgi_module").kind == "time"
    # the hand overlay still adds what custom handlers parse.
    assert only(specs("worker_processes"), "core").kind == "auto_number"
    # first and last release: http2 appeared in 1.25.1; spdy was replaced by http/2 in 1.9.5.
    assert only(specs("http2"), "http_v2_module").since == (1, 25, 1)
    spdy = only(specs("spdy_chunk_size"), "http_spdy_module")
    assert spdy.last is not None and spdy.removed == (1, 9, 5)
    location = only(specs("location"), "http_core_module")
    assert location.block and not only(specs("server"), "http_upstream_module").block
    assert "http_ssl_module" in OPTIONAL_MODULES and "http_gzip_module" not in OPTIONAL_MODULES


def test_third_party_rows_name_their_module_and_so() -> None:
    [brotli] = specs("brotli")
    assert brotli.package == "ngx_brotli" and brotli.so == ("ngx_http_brotli_filter_module.so",)
    [more] = specs("more_set_headers")
    assert more.so == ("ngx_http_headers_more_filter_module.so",)
    assert {s.module for s in specs("js_import")} == {"http_js_module", "stream_js_module"}
    lua = only(specs("content_by_lua_block"), "http_lua_module")
    assert lua.block and lua.so == ("ngx_http_lua_module.so",)
    assert doc_url("brotli") == ""


HTTP_FAMILIES = """
events { }
http {
    geoip_country /usr/share/GeoIP/GeoIP.dat;
    scgi_cache_path /var/cache/scgi keys_zone=scgi:10m;
    uwsgi_cache_path /var/cache/uwsgi keys_zone=uw:10m;
    fastcgi_cache_path /var/cache/fcgi keys_zone=fc:10m;
    ssi_types text/plain;
    server {
        listen 443 ssl;
        listen 443 quic reuseport;
        http2 on;
        http3 on;
        quic_retry on;
        http2_max_concurrent_streams 64;
        ssi on;
        ssi_silent_errors on;
        location /s { scgi_pass 127.0.0.1:4000; scgi_cache scgi; scgi_cache_valid 200 1m;
                      scgi_buffering off; scgi_request_buffering off; }
        location /u { uwsgi_pass 127.0.0.1:4001; uwsgi_cache uw; uwsgi_cache_lock on;
                      uwsgi_read_timeout 30s; }
        location /f { fastcgi_pass 127.0.0.1:9000; fastcgi_cache fc;
                      fastcgi_cache_lock_timeout 5s; fastcgi_cache_revalidate on; }
        location /v { mp4; mp4_buffer_size 1m; mp4_max_buffer_size 5m; }
        location /i { image_filter resize 100 100; image_filter_jpeg_quality 80; }
        location /x { xslt_stylesheet /etc/nginx/a.xslt; xslt_types text/xml; }
    }
}
stream {
    server { listen 12345; ssl_preread on; proxy_pass 127.0.0.1:1; proxy_timeout 10m; }
}
mail {
    server { listen 2525; protocol smtp; smtp_auth login plain; smtp_greeting_delay 1s; }
}
"""


def test_real_families_in_their_contexts_are_clean() -> None:
    assert findings(HTTP_FAMILIES) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("http { scgi_pass 127.0.0.1:1; }", "scgi_pass"),
        ("http { server { mp4; } }", "mp4"),
        ("events { ssi on; }", "ssi"),
        ("http { server { location / { geoip_country /g.dat; } } }", "geoip_country"),
        ("http { server { location / { ssl_preread on; } } }", "ssl_preread"),
        ("stream { server { xslt_types text/xml; } }", "xslt_types"),
        ("http { server { location / { http2 on; } } }", "http2"),
    ],
)
def test_misplaced_directives_give_v_context(text: str, name: str) -> None:
    [finding] = findings(text)
    assert finding.rule == "V-context" and f'"{name}" is not allowed' in finding.message


DYNAMIC = """{load}events {{ }}
http {{
    brotli on;
    server {{
        listen 80;
        more_set_headers "Server: x";
        location /lua {{ content_by_lua_block {{ ngx.say("hi") }} }}
        location /js {{ js_content main.handler; }}
    }}
}}
"""
LOADS = (
    "load_module modules/ngx_http_brotli_filter_module.so;\n"
    "load_module modules/ngx_http_headers_more_filter_module.so;\n"
    "load_module modules/ndk_http_module.so;\n"
    "load_module modules/ngx_http_lua_module.so;\n"
    "load_module modules/ngx_http_js_module.so;\n"
)


def test_dynamic_module_directives_are_fine_when_loaded() -> None:
    assert findings(DYNAMIC.format(load=LOADS)) == []


def test_dynamic_module_directives_warn_when_not_loaded() -> None:
    found = findings(DYNAMIC.format(load=""))
    assert {f.rule for f in found} == {"V-unknown"} and len(found) == 4
    assert all(f.severity == "warning" for f in found)
    brotli = next(f for f in found if '"brotli"' in f.message)
    assert "ngx_http_brotli_filter_module.so" in brotli.message and "ngx_brotli" in brotli.message


def test_dynamic_module_compiled_in_is_silent() -> None:
    facts = HostFacts.from_dict(
        {
            "nginx_configure_args": (
                "--add-module=../ngx_brotli --add-module=../headers-more-nginx-module-0.37 "
                "--add-module=../ngx_lua-0.10.26"
            ),
            "nginx_modules": ["http_js_module"],
        }
    )
    assert findings(DYNAMIC.format(load=""), facts) == []


def test_dynamic_module_in_a_lone_site_file_is_only_info() -> None:
    text = "more_set_headers 'X-A: b';\n"
    [finding] = findings(text)
    assert (finding.rule, finding.severity) == ("V-unknown", "info")
    assert "the main config must load it" in finding.message


def test_loaded_module_directive_in_the_wrong_place_gives_v_context() -> None:
    text = LOADS + "events { }\nhttp { server { listen 80; } brotli_comp_level 5 6 7; }\n"
    [finding] = findings(text)
    assert finding.rule == "V-args" and "brotli_comp_level" in finding.message
    text = LOADS + "events { more_set_headers 'A: b'; }\nhttp { }\n"
    [finding] = findings(text)
    assert finding.rule == "V-context"


def test_truly_unknown_name_is_an_error_even_with_known_modules_loaded() -> None:
    text = LOADS + "events { }\nhttp { brotli_quality 5; }\n"
    [finding] = findings(text)
    assert (finding.rule, finding.severity) == ("V-unknown", "error")
    assert "no nginx or known third-party module" in finding.message


def test_removed_directive_names_its_versions() -> None:
    text = "events { }\nhttp { spdy_chunk_size 8k; limit_zone one $binary_remote_addr 10m; }\n"
    facts = HostFacts(nginx_version=(1, 22, 1))
    found = sorted(findings(text, facts), key=lambda f: f.message)
    assert [(f.rule, f.severity) for f in found] == [("V-unknown", "warning")] * 2
    assert "removed in 1.7.6" in found[0].message and "1.22.1" in found[0].message
    # spdy_* lived on in the http/2 module (ignored with a warning) until 1.19.7.
    assert "removed in 1.19.7" in found[1].message
    old = HostFacts(nginx_version=(1, 6, 2))
    assert [f for f in findings(text, old) if "limit_zone" in f.message] == []


def test_new_directive_on_an_old_nginx_names_its_version() -> None:
    text = "events { }\nhttp { server { listen 80; keepalive_time 1h; } }\n"
    [finding] = findings(text, HostFacts(nginx_version=(1, 18, 0)))
    assert "1.19.10" in finding.message and "1.18.0" in finding.message
    assert findings(text, HostFacts(nginx_version=(1, 20, 0))) == []


# --- agreement with the real nginx binary -------------------------------------------------------

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MODULES_DIR = Path("/usr/lib/nginx/modules")

# (directive line, module) — dummy but valid arguments.
SAMPLE = [
    ("worker_rlimit_nofile 1024;", "core"),
    ("pcre_jit on;", "core"),
    ("timer_resolution 100ms;", "core"),
    ("worker_shutdown_timeout 10s;", "core"),
    ("worker_connections 512;", "events"),
    ("multi_accept on;", "events"),
    ("accept_mutex_delay 100ms;", "events"),
    ("sendfile on;", "http_core_module"),
    ("tcp_nopush on;", "http_core_module"),
    ("client_header_timeout 10s;", "http_core_module"),
    ("large_client_header_buffers 4 8k;", "http_core_module"),
    ("server_names_hash_bucket_size 64;", "http_core_module"),
    ("variables_hash_max_size 1024;", "http_core_module"),
    ("internal;", "http_core_module"),
    ("log_not_found off;", "http_core_module"),
    ("gzip_comp_level 5;", "http_gzip_module"),
    ("scgi_read_timeout 10s;", "http_scgi_module"),
    ("scgi_buffering on;", "http_scgi_module"),
    ("uwsgi_read_timeout 10s;", "http_uwsgi_module"),
    ("fastcgi_cache_lock on;", "http_fastcgi_module"),
    ("fastcgi_request_buffering on;", "http_fastcgi_module"),
    ("proxy_connect_timeout 5s;", "http_proxy_module"),
    ("ssi_silent_errors on;", "http_ssi_module"),
    ("mp4;", "http_mp4_module"),
    ("flv;", "http_flv_module"),
    ("secure_link_secret s3cr3t;", "http_secure_link_module"),
    ("expires 1h;", "http_headers_module"),
    ("limit_req_status 429;", "http_limit_req_module"),
    ("keepalive 8;", "http_upstream_keepalive_module"),
    ("least_conn;", "http_upstream_least_conn_module"),
    ("ip_hash;", "http_upstream_ip_hash_module"),
    ("ssl_session_timeout 5m;", "http_ssl_module"),
    ("http2_chunk_size 8k;", "http_v2_module"),
    ("empty_gif;", "http_empty_gif_module"),
    ("random_index on;", "http_random_index_module"),
    ("real_ip_recursive on;", "http_realip_module"),
    ("create_full_put_path on;", "http_dav_module"),
    ("geoip_proxy_recursive on;", "http_geoip_module"),
    ("image_filter_buffer 1m;", "http_image_filter_module"),
    ("more_clear_headers X-A;", "http_headers_more_filter_module"),
    ("lua_code_cache on;", "http_lua_module"),
    ("preread_timeout 10s;", "stream"),
    ("ssl_preread on;", "stream_ssl_preread_module"),
    ("proxy_timeout 10s;", "stream_proxy_module"),
]

LOAD_ALL = "".join(
    f"load_module {MODULES_DIR / so};\n"
    for so in (
        "ndk_http_module.so",
        "ngx_http_lua_module.so",
        "ngx_http_headers_more_filter_module.so",
        "ngx_http_geoip_module.so",
        "ngx_http_image_filter_module.so",
        "ngx_http_xslt_filter_module.so",
        "ngx_http_echo_module.so",
        "ngx_stream_module.so",
        "ngx_mail_module.so",
    )
    if (MODULES_DIR / so).exists()
)
HTTP_HEAD = (
    "client_body_temp_path {t}/b; proxy_temp_path {t}/p; fastcgi_temp_path {t}/f;\n"
    "uwsgi_temp_path {t}/u; scgi_temp_path {t}/s; access_log off;\n"
)
# Where a directive goes in each context code; {d} is the directive line.
PLACES = {
    "main": "{d}\nevents {{ }}\n",
    "events": "events {{ {d} }}\n",
    "http": "events {{ }}\nhttp {{ {h} {d} }}\n",
    "srv": "events {{ }}\nhttp {{ {h} server {{ listen 127.0.0.1:{p}; {d} }} }}\n",
    "loc": "events {{ }}\nhttp {{ {h} server {{ listen 127.0.0.1:{p}; location / {{ {d} }} }} }}\n",
    "ups": "events {{ }}\nhttp {{ {h} upstream u {{ server 127.0.0.1:1; {d} }} }}\n",
    "stream": "events {{ }}\nstream {{ {d} }}\n",
    "ssrv": "events {{ }}\nstream {{ server {{ listen 127.0.0.1:{p}; proxy_pass 127.0.0.1:1; "
    "{d} }} }}\n",
    "lif": "events {{ }}\nhttp {{ {h} server {{ location / {{ if ($uri) {{ {d} }} }} }} }}\n",
    "sif": "events {{ }}\nhttp {{ {h} server {{ if ($uri) {{ {d} }} }} }}\n",
    "lmt": "events {{ }}\nhttp {{ {h} server {{ location / {{ limit_except GET {{ {d} }} "
    "}} }} }}\n",
    "sups": "events {{ }}\nstream {{ upstream su {{ server 127.0.0.1:1; {d} }} }}\n",
    "mail": "events {{ }}\nmail {{ {d} }}\n",
    "msrv": "events {{ }}\nmail {{ server {{ listen 127.0.0.1:{p}; {d} }} }}\n",
}


def _nginx_build() -> str | None:
    if not Path(NGINX).exists():
        return None
    result = subprocess.run([NGINX, "-V"], capture_output=True, text=True, check=False)
    return result.stderr


def _available(spec: Spec, build: str) -> bool:
    """Whether Debian's build has this module (compiled in, or its .so installed)."""
    if spec.so and any((MODULES_DIR / so).exists() for so in spec.so):
        return True
    if spec.package or any(_dynamic_in(build, so) for so in spec.so):
        return False  # a third-party module, or one this build makes a .so that is not installed
    if spec.module in OPTIONAL_MODULES:
        return f"--with-{spec.module} " in build + " "
    return f"--without-{spec.module}" not in build


def _dynamic_in(build: str, so: str) -> bool:
    """Whether the build compiles the module of `so` as a dynamic one (--with-stream=dynamic)."""
    name = so.removeprefix("ngx_").removesuffix(".so")
    return any(f"--with-{flag}=dynamic" in build for flag in (name, name.removesuffix("_module")))


def _nginx_t(tmp: Path, body: str) -> tuple[int, str]:
    conf = tmp / "nginx.conf"
    conf.write_text(f"pid {tmp}/nginx.pid;\n{LOAD_ALL}{body}")
    result = subprocess.run(
        [NGINX, "-t", "-q", "-p", str(tmp), "-c", str(conf), "-e", str(tmp / "error.log")],
        capture_output=True,
        text=True,
        check=False,
        timeout=20,
    )
    return result.returncode, result.stderr


def _place(code: str, line: str, tmp: Path) -> str:
    return PLACES[code].format(d=line, h=HTTP_HEAD.format(t=tmp), p=18700)


@pytest.mark.skipif(_nginx_build() is None, reason="no nginx binary")
def test_the_table_agrees_with_the_real_nginx_on_contexts(tmp_path: Path) -> None:
    build = _nginx_build() or ""
    checked = 0
    for line, module in SAMPLE:
        name = line.split()[0].rstrip(";")
        rows = [s for s in specs(name) if s.module == module]
        assert rows, (name, module)
        if not _available(rows[0], build):
            continue
        allowed = {c for s in specs(name) for c in s.contexts.split()}
        right = next(c for c in PLACES if c in rows[0].contexts.split())
        wrong = next(c for c in ("events", "ups", "main", "loc", "http") if c not in allowed)
        code, err = _nginx_t(tmp_path, _place(right, line, tmp_path))
        assert code == 0, (line, right, err)
        code, err = _nginx_t(tmp_path, _place(wrong, line, tmp_path))
        assert code != 0 and "is not allowed here" in err, (line, wrong, err)
        checked += 1
    assert checked >= 40


@pytest.mark.skipif(_nginx_build() is None, reason="no nginx binary")
def test_the_table_agrees_with_the_real_nginx_on_argument_counts(tmp_path: Path) -> None:
    build = _nginx_build() or ""
    checked = 0
    for line, module in SAMPLE:
        name = line.split()[0].rstrip(";")
        [spec] = [s for s in specs(name) if s.module == module]
        if not _available(spec, build) or spec.args in ("*", "1+", "2+"):
            continue
        count = 1 if spec.args == "flag" else int(max(spec.args))
        args = ["on"] * (count + 1)
        assert not arity_ok(spec.args, len(args))
        place = next(c for c in PLACES if c in spec.contexts.split())
        code, err = _nginx_t(tmp_path, _place(place, f"{name} {' '.join(args)};", tmp_path))
        assert code != 0 and "invalid number of arguments" in err, (name, err)
        checked += 1
    assert checked >= 30


# Event methods of other systems: nginx knows them, a Linux build does not compile them.
_OTHER_PLATFORMS = ("kqueue_", "devpoll_", "eventport_", "iocp_", "acceptex_", "post_acceptex")


def _dummy_args(form: str) -> list[str]:
    if form == "flag":
        return ["on"]
    if form == "*":
        return []
    return ["x"] * int(form[0])


@pytest.mark.skipif(_nginx_build() is None, reason="needs nginx: apt-get install nginx")
def test_every_directive_of_the_installed_nginx_agrees(tmp_path: Path) -> None:
    """Every row nginx 1.22.1 (Debian's build) has: allowed where the table says, and rejected
    as "not allowed here" (nginx checks the context before the arguments) where it does not."""
    build = _nginx_build() or ""
    version = (1, 22, 1)
    wrong_order = ("events", "ups", "main", "loc", "http", "srv", "ssrv", "msrv")
    problems = []
    for name, rows in table().items():
        allowed = {c for s in rows for c in s.contexts.split()}
        for spec in rows:
            if (spec.since and spec.since > version) or (spec.removed and spec.removed <= version):
                continue
            if (
                not _available(spec, build)
                or name == "include"
                or name.startswith(_OTHER_PLATFORMS)
            ):
                continue
            line = f"{name} {' '.join(_dummy_args(spec.args))}" + (" { }" if spec.block else ";")
            right = next((c for c in PLACES if c in spec.contexts.split()), None)
            wrong = next((c for c in wrong_order if c not in allowed), None)
            for code, should_pass in ((right, True), (wrong, False)):
                if code is None:
                    continue
                _rc, err = _nginx_t(tmp_path, _place(code, line, tmp_path))
                if spec.package and "unknown directive" in err:
                    break  # newer than the installed module's version
                refused = any(
                    m in err
                    for m in ("is not allowed here", "unknown directive", "number of arguments")
                )
                if should_pass == refused or (not should_pass and "not allowed" not in err):
                    problems.append((name, spec.module, code, err))
    assert problems == []


RTMP = """{load}events {{ }}
rtmp {{
    server {{
        listen 1935;
        chunk_size 4096;
        application live {{
            live on;
            record off;
            allow publish 127.0.0.1;
            deny publish all;
        }}
    }}
}}
"""


def test_rtmp_blocks_are_checked_once_the_module_is_loaded() -> None:
    load = "load_module modules/ngx_rtmp_module.so;\n"
    assert findings(RTMP.format(load=load)) == []
    misplaced = RTMP.format(load=load).replace("live on;", "chunk_size 4096;")
    [finding] = findings(misplaced)
    assert finding.rule == "V-context" and '"chunk_size" is not allowed' in finding.message
    unloaded = findings(RTMP.format(load=""))
    assert {f.rule for f in unloaded} == {"V-unknown"}
    assert all("ngx_rtmp_module.so" in f.message for f in unloaded)


GATEWAY_SITE = """lua_shared_dict sessions 10m;
init_by_lua_block { require "gw" }
server {
    listen 8000;
    location / {
        access_by_lua_block { gw.check() }
        proxy_pass http://127.0.0.1:9000;
    }
}
"""


def test_third_party_directives_in_a_site_file_are_one_info_per_module() -> None:
    # The site file's http is the assumed one: the unseen nginx.conf may load the module.
    config = parse_auto(GATEWAY_SITE, "sites-enabled/gateway.conf")
    assert config.partial
    [finding] = get_rule("V-unknown").check(RuleContext(config=config))
    assert (finding.severity, finding.line) == ("info", 1)
    assert "and 2 more lines that need it" in finding.message
    assert finding.evidence["uses"] == 3


def test_an_unloaded_module_is_one_warning_for_all_its_directives() -> None:
    text = (
        "events { }\nrtmp {\n    server {\n        listen 1935;\n"
        "        application live { live on; hls on; hls_path /tmp/hls; }\n    }\n}\n"
    )
    [finding] = findings(text)
    assert (finding.rule, finding.severity, finding.line) == ("V-unknown", "warning", 2)
    assert finding.evidence["directives"][:2] == ["rtmp", "application"]
    # Loading it silences them all.
    assert findings("load_module modules/ngx_rtmp_module.so;\n" + text) == []


def test_numbers_outside_a_modules_bounds_are_v_args_errors() -> None:
    text = LOADS + "events { }\nhttp { brotli_comp_level 12; gzip_comp_level 10; }\n"
    found = sorted(findings(text), key=lambda f: f.message)
    assert [(f.rule, f.severity) for f in found] == [("V-args", "error")] * 2
    assert '"brotli_comp_level" must be between 0 and 11, not 12' in found[0].message
    assert '"gzip_comp_level" must be between 1 and 9, not 10' in found[1].message
    # The limits themselves, and a variable, are fine.
    edges = LOADS + "events { }\nhttp { brotli_comp_level 0; gzip_comp_level 9; }\n"
    assert findings(edges) == []
    assert findings(LOADS + "events { }\nhttp { brotli_comp_level 11; gzip_comp_level 1; }\n") == []


BOUNDED = [
    ("gzip_comp_level", "http", "1", "9", "0", "10"),
    ("limit_req_status", "http", "400", "599", "399", "600"),
    ("limit_conn_status", "http", "400", "599", "399", "600"),
    ("uwsgi_modifier1", "loc", "0", "255", None, "256"),
]


@pytest.mark.skipif(_nginx_build() is None, reason="needs nginx: apt-get install nginx")
def test_the_bounds_agree_with_the_real_nginx(tmp_path: Path) -> None:
    for name, code, low, high, below, above in BOUNDED:
        [spec] = [s for s in specs(name) if not s.package]
        assert spec.bounds == (int(low), int(high)), name
        for value in (low, high):
            assert argument_problem(spec, name, [value]) is None
            rc, err = _nginx_t(tmp_path, _place(code, f"{name} {value};", tmp_path))
            assert rc == 0, (name, value, err)
        for value in (v for v in (below, above) if v is not None):
            assert argument_problem(spec, name, [value]) is not None
            rc, err = _nginx_t(tmp_path, _place(code, f"{name} {value};", tmp_path))
            assert rc != 0 and "value must be between" in err, (name, value, err)
