"""The directive table: contexts, argument forms, versions and the providing module.

Context codes follow nginx's own configuration masks:
  main, events; http (http block), srv (http server), loc (location), ups (http upstream),
  sif / lif (`if` in server / in location), lmt (limit_except);
  stream, ssrv, sups (stream block, its server, its upstream); mail, msrv.
Argument forms: '0', '1', '2', '12' (one or two), '123', '1234', '1+', '2+', '*' (any),
  'flag' (on | off). A value kind ('size', 'time', 'number', 'auto_number', 'size_off')
  is checked on the arguments of a one-argument directive and on the first argument otherwise.
"""

from __future__ import annotations

from typing import NamedTuple

from nginx_fleet_analyzer.facts import Version
from nginx_fleet_analyzer.model import Directive


class Spec(NamedTuple):
    """One row of the directive table."""

    name: str
    contexts: str
    args: str
    module: str
    kind: str = ""
    since: Version | None = None
    deprecated: Version | None = None
    removed: Version | None = None
    # True: may appear several times in one block; False: "is duplicate"; None: decided by form.
    repeat: bool | None = None


# Context groups used by many rows.
HSL = "http srv loc"
HSLI = "http srv loc lif"
HS = "http srv"
SL = "srv loc"
RW = "srv sif loc lif"
SS = "stream ssrv"
MS = "mail msrv"

CORE = "core"
EVENTS = "events"
HTTP = "http_core_module"
UPS = "http_upstream_module"
PROXY = "http_proxy_module"
FCGI = "http_fastcgi_module"
UWSGI = "http_uwsgi_module"
SCGI = "http_scgi_module"
GRPC = "http_grpc_module"
SSL = "http_ssl_module"
H2 = "http_v2_module"
H3 = "http_v3_module"
GZIP = "http_gzip_module"
REWRITE = "http_rewrite_module"
LOG = "http_log_module"
STREAM = "stream"
STREAM_PROXY = "stream_proxy_module"
STREAM_SSL = "stream_ssl_module"
MAIL = "mail"

# Modules compiled in unless `--without-…`; every other module must be named by nginx -V.
DEFAULT_MODULES = frozenset(
    {
        CORE,
        EVENTS,
        HTTP,
        UPS,
        PROXY,
        FCGI,
        UWSGI,
        SCGI,
        GRPC,
        GZIP,
        REWRITE,
        LOG,
        STREAM_PROXY,
        "http_headers_module",
        "http_access_module",
        "http_auth_basic_module",
        "http_autoindex_module",
        "http_index_module",
        "http_limit_req_module",
        "http_limit_conn_module",
        "http_map_module",
        "http_geo_module",
        "http_split_clients_module",
        "http_charset_module",
        "http_ssi_module",
        "http_userid_module",
        "http_referer_module",
        "http_memcached_module",
        "http_mirror_module",
        "http_empty_gif_module",
        "http_browser_module",
        "http_upstream_hash_module",
        "http_upstream_ip_hash_module",
        "http_upstream_least_conn_module",
        "http_upstream_random_module",
        "http_upstream_keepalive_module",
        "http_upstream_zone_module",
        "stream_access_module",
        "stream_limit_conn_module",
        "stream_log_module",
        "stream_map_module",
        "stream_return_module",
        "stream_upstream_hash_module",
        "stream_upstream_least_conn_module",
        "stream_upstream_random_module",
        "stream_upstream_zone_module",
        "stream_split_clients_module",
        "stream_geo_module",
        "stream_set_module",
        "mail_pop3_module",
        "mail_imap_module",
        "mail_smtp_module",
        "mail_proxy_module",
        "mail_auth_http_module",
    }
)

# Documentation page of each module on nginx.org.
_DOC_PAGES = {
    CORE: "ngx_core_module",
    EVENTS: "ngx_core_module",
    STREAM: "stream/ngx_stream_core_module",
    MAIL: "mail/ngx_mail_core_module",
}

# Directives that always open a block; in `upstream`, `server` is a plain directive.
BLOCK_DIRECTIVES = frozenset(
    {
        "events",
        "http",
        "stream",
        "mail",
        "server",
        "location",
        "upstream",
        "if",
        "limit_except",
        "map",
        "geo",
        "split_clients",
        "types",
        "charset_map",
        "match",
    }
)

# Blocks whose body is a list of entries, not directives (not checked against the table).
ENTRY_BLOCKS = frozenset(
    {"map", "types", "geo", "split_clients", "charset_map", "match", "ssl_conf_command_block"}
)

_V = tuple[int, int, int]


def _v(text: str) -> _V:
    major, minor, patch = (int(p) for p in text.split("."))
    return major, minor, patch


_ROWS: tuple[Spec, ...] = (
    # core (main context)
    Spec("daemon", "main", "flag", CORE),
    Spec("master_process", "main", "flag", CORE),
    Spec("worker_processes", "main", "1", CORE, "auto_number"),
    Spec("worker_rlimit_nofile", "main", "1", CORE, "number"),
    Spec("worker_rlimit_core", "main", "1", CORE, "size"),
    Spec("worker_priority", "main", "1", CORE),
    Spec("worker_cpu_affinity", "main", "1+", CORE),
    Spec("worker_shutdown_timeout", "main", "1", CORE, "time", _v("1.11.11")),
    Spec("working_directory", "main", "1", CORE),
    Spec("pid", "main", "1", CORE),
    Spec("lock_file", "main", "1", CORE),
    Spec("user", "main", "12", CORE),
    Spec("env", "main", "1", CORE, repeat=True),
    Spec("load_module", "main", "1", CORE, repeat=True),
    Spec("pcre_jit", "main", "flag", CORE),
    Spec("thread_pool", "main", "23", CORE, repeat=True),
    Spec("timer_resolution", "main", "1", CORE, "time"),
    Spec("ssl_engine", "main", "1", CORE),
    Spec("debug_points", "main", "1", CORE),
    Spec("error_log", "main http srv loc stream ssrv mail msrv", "1+", CORE, repeat=True),
    Spec("include", "*", "1", CORE, repeat=True),
    Spec("events", "main", "0", CORE),
    Spec("http", "main", "0", HTTP),
    Spec("stream", "main", "0", STREAM),
    Spec("mail", "main", "0", MAIL),
    # events
    Spec("worker_connections", "events", "1", EVENTS, "number"),
    Spec("use", "events", "1", EVENTS),
    Spec("multi_accept", "events", "flag", EVENTS),
    Spec("accept_mutex", "events", "flag", EVENTS),
    Spec("accept_mutex_delay", "events", "1", EVENTS, "time"),
    Spec("worker_aio_requests", "events", "1", EVENTS, "number"),
    Spec("debug_connection", "events", "1", EVENTS, repeat=True),
    # http core
    Spec("server", "http ups stream sups mail", "*", HTTP, repeat=True),
    Spec("location", "srv loc", "12", HTTP, repeat=True),
    Spec("listen", "srv", "1+", HTTP, repeat=True),
    Spec("server_name", "srv", "1+", HTTP, repeat=True),
    Spec("root", "http srv loc lif", "1", HTTP),
    Spec("alias", "loc", "1", HTTP),
    Spec("index", HSL, "1+", "http_index_module", repeat=True),
    Spec("try_files", SL, "2+", HTTP),
    Spec("types", HSL, "0", HTTP, repeat=True),
    Spec("default_type", HSL, "1", HTTP),
    Spec("types_hash_max_size", HSL, "1", HTTP, "number"),
    Spec("types_hash_bucket_size", HSL, "1", HTTP, "number"),
    Spec("sendfile", HSLI, "flag", HTTP),
    Spec("sendfile_max_chunk", HSL, "1", HTTP, "size"),
    Spec("tcp_nopush", HSL, "flag", HTTP),
    Spec("tcp_nodelay", HSL, "flag", HTTP),
    Spec("aio", HSL, "1", HTTP),
    Spec("aio_write", HSL, "flag", HTTP, since=_v("1.9.13")),
    Spec("directio", HSL, "1", HTTP, "size_off"),
    Spec("directio_alignment", HSL, "1", HTTP, "size"),
    Spec("read_ahead", HSL, "1", HTTP, "size"),
    Spec("output_buffers", HSL, "2", HTTP),
    Spec("postpone_output", HSL, "1", HTTP, "size"),
    Spec("keepalive_timeout", HSL, "12", HTTP, "time"),
    Spec("keepalive_requests", HSL, "1", HTTP, "number"),
    Spec("keepalive_time", HSL, "1", HTTP, "time", _v("1.19.10")),
    Spec("keepalive_disable", HSL, "1+", HTTP, repeat=True),
    Spec("send_timeout", HSL, "1", HTTP, "time"),
    Spec("send_lowat", HSL, "1", HTTP, "size"),
    Spec("reset_timedout_connection", HSL, "flag", HTTP),
    Spec("lingering_close", HSL, "1", HTTP),
    Spec("lingering_time", HSL, "1", HTTP, "time"),
    Spec("lingering_timeout", HSL, "1", HTTP, "time"),
    Spec("client_header_timeout", HS, "1", HTTP, "time"),
    Spec("client_header_buffer_size", HS, "1", HTTP, "size"),
    Spec("large_client_header_buffers", HS, "2", HTTP),
    Spec("client_body_timeout", HSL, "1", HTTP, "time"),
    Spec("client_body_buffer_size", HSL, "1", HTTP, "size"),
    Spec("client_max_body_size", HSL, "1", HTTP, "size"),
    Spec("client_body_temp_path", HSL, "1234", HTTP),
    Spec("client_body_in_file_only", HSL, "1", HTTP),
    Spec("client_body_in_single_buffer", HSL, "flag", HTTP),
    Spec("ignore_invalid_headers", HS, "flag", HTTP),
    Spec("underscores_in_headers", HS, "flag", HTTP),
    Spec("merge_slashes", HS, "flag", HTTP),
    Spec("server_tokens", HSL, "1", HTTP),
    Spec("server_names_hash_max_size", "http", "1", HTTP, "number"),
    Spec("server_names_hash_bucket_size", "http", "1", HTTP, "number"),
    Spec("server_name_in_redirect", HSL, "flag", HTTP),
    Spec("port_in_redirect", HSL, "flag", HTTP),
    Spec("absolute_redirect", HSL, "flag", HTTP, since=_v("1.11.8")),
    Spec("msie_padding", HSL, "flag", HTTP),
    Spec("msie_refresh", HSL, "flag", HTTP),
    Spec("log_not_found", HSL, "flag", HTTP),
    Spec("log_subrequest", HSL, "flag", HTTP),
    Spec("recursive_error_pages", HSL, "flag", HTTP),
    Spec("error_page", HSLI, "2+", HTTP, repeat=True),
    Spec("internal", "loc", "0", HTTP),
    Spec("limit_rate", HSLI, "1", HTTP, "size"),
    Spec("limit_rate_after", HSLI, "1", HTTP, "size"),
    Spec("limit_except", "loc", "1+", HTTP),
    Spec("satisfy", HSL, "1", HTTP),
    Spec("resolver", HSL, "1+", HTTP),
    Spec("resolver_timeout", HSL, "1", HTTP, "time"),
    Spec("open_file_cache", HSL, "12", HTTP),
    Spec("open_file_cache_valid", HSL, "1", HTTP, "time"),
    Spec("open_file_cache_min_uses", HSL, "1", HTTP, "number"),
    Spec("open_file_cache_errors", HSL, "flag", HTTP),
    Spec("open_file_cache_events", HSL, "flag", HTTP),
    Spec("disable_symlinks", HSL, "12", HTTP),
    Spec("if_modified_since", HSL, "1", HTTP),
    Spec("etag", HSL, "flag", HTTP),
    Spec("chunked_transfer_encoding", HSL, "flag", HTTP),
    Spec("max_ranges", HSL, "1", HTTP, "number"),
    Spec("subrequest_output_buffer_size", HSL, "1", HTTP, "size", _v("1.13.10")),
    Spec("connection_pool_size", HS, "1", HTTP, "size"),
    Spec("request_pool_size", HS, "1", HTTP, "size"),
    Spec("variables_hash_max_size", "http", "1", HTTP, "number"),
    Spec("variables_hash_bucket_size", "http", "1", HTTP, "number"),
    Spec("auth_delay", HSL, "1", HTTP, "time", _v("1.17.10")),
    Spec("ssl", HS, "flag", SSL, deprecated=_v("1.15.0"), removed=_v("1.25.1")),
    # upstream
    Spec("upstream", "http stream", "1", UPS, repeat=True),
    Spec("zone", "ups sups", "12", "http_upstream_zone_module", since=_v("1.9.0")),
    Spec("hash", "ups sups", "12", "http_upstream_hash_module", repeat=True),
    Spec("ip_hash", "ups", "0", "http_upstream_ip_hash_module", repeat=True),
    Spec("least_conn", "ups sups", "0", "http_upstream_least_conn_module", repeat=True),
    Spec("random", "ups sups", "*", "http_upstream_random_module", since=_v("1.15.1"), repeat=True),
    Spec("keepalive", "ups", "1", "http_upstream_keepalive_module", "number"),
    Spec("keepalive_timeout", "ups", "1", "http_upstream_keepalive_module", "time"),
    Spec("keepalive_requests", "ups", "1", "http_upstream_keepalive_module", "number"),
    Spec("keepalive_time", "ups", "1", "http_upstream_keepalive_module", "time"),
    Spec("resolver", "ups", "1+", UPS, since=_v("1.27.3")),
    Spec("resolver_timeout", "ups", "1", UPS, "time", _v("1.27.3")),
    # proxy
    Spec("proxy_pass", "loc lif lmt", "1", PROXY),
    Spec("proxy_http_version", HSL, "1", PROXY),
    Spec("proxy_set_header", HSL, "2", PROXY, repeat=True),
    Spec("proxy_hide_header", HSL, "1", PROXY, repeat=True),
    Spec("proxy_pass_header", HSL, "1", PROXY, repeat=True),
    Spec("proxy_ignore_headers", HSL, "1+", PROXY, repeat=True),
    Spec("proxy_set_body", HSL, "1", PROXY),
    Spec("proxy_pass_request_headers", HSL, "flag", PROXY),
    Spec("proxy_pass_request_body", HSL, "flag", PROXY),
    Spec("proxy_method", HSL, "1", PROXY),
    Spec("proxy_redirect", HSL, "12", PROXY, repeat=True),
    Spec("proxy_cookie_domain", HSL, "12", PROXY, repeat=True),
    Spec("proxy_cookie_path", HSL, "12", PROXY, repeat=True),
    Spec("proxy_cookie_flags", HSL, "1+", PROXY, since=_v("1.19.3"), repeat=True),
    Spec("proxy_buffering", HSL, "flag", PROXY),
    Spec("proxy_request_buffering", HSL, "flag", PROXY, since=_v("1.7.11")),
    Spec("proxy_buffer_size", HSL, "1", PROXY, "size"),
    Spec("proxy_buffers", HSL, "2", PROXY, "number"),
    Spec("proxy_busy_buffers_size", HSL, "1", PROXY, "size"),
    Spec("proxy_max_temp_file_size", HSL, "1", PROXY, "size"),
    Spec("proxy_temp_file_write_size", HSL, "1", PROXY, "size"),
    Spec("proxy_temp_path", HSL, "1234", PROXY),
    Spec("proxy_connect_timeout", HSL, "1", PROXY, "time"),
    Spec("proxy_read_timeout", HSL, "1", PROXY, "time"),
    Spec("proxy_send_timeout", HSL, "1", PROXY, "time"),
    Spec("proxy_next_upstream", HSL, "1+", PROXY, repeat=True),
    Spec("proxy_next_upstream_tries", HSL, "1", PROXY, "number", _v("1.7.5")),
    Spec("proxy_next_upstream_timeout", HSL, "1", PROXY, "time", _v("1.7.5")),
    Spec("proxy_intercept_errors", HSL, "flag", PROXY),
    Spec("proxy_ignore_client_abort", HSL, "flag", PROXY),
    Spec("proxy_bind", HSL, "12", PROXY),
    Spec("proxy_socket_keepalive", HSL, "flag", PROXY, since=_v("1.15.6")),
    Spec("proxy_limit_rate", HSL, "1", PROXY, "size"),
    Spec("proxy_headers_hash_max_size", HSL, "1", PROXY, "number"),
    Spec("proxy_headers_hash_bucket_size", HSL, "1", PROXY, "number"),
    Spec("proxy_store", HSL, "1", PROXY),
    Spec("proxy_store_access", HSL, "123", PROXY),
    Spec("proxy_force_ranges", HSL, "flag", PROXY),
    Spec("proxy_cache", HSL, "1", PROXY),
    Spec("proxy_cache_path", "http", "2+", PROXY, repeat=True),
    Spec("proxy_cache_key", HSL, "1", PROXY),
    Spec("proxy_cache_valid", HSL, "1+", PROXY, repeat=True),
    Spec("proxy_cache_lock", HSL, "flag", PROXY),
    Spec("proxy_cache_lock_timeout", HSL, "1", PROXY, "time"),
    Spec("proxy_cache_lock_age", HSL, "1", PROXY, "time"),
    Spec("proxy_cache_use_stale", HSL, "1+", PROXY, repeat=True),
    Spec("proxy_cache_background_update", HSL, "flag", PROXY, since=_v("1.11.10")),
    Spec("proxy_cache_bypass", HSL, "1+", PROXY, repeat=True),
    Spec("proxy_no_cache", HSL, "1+", PROXY, repeat=True),
    Spec("proxy_cache_methods", HSL, "1+", PROXY, repeat=True),
    Spec("proxy_cache_min_uses", HSL, "1", PROXY, "number"),
    Spec("proxy_cache_revalidate", HSL, "flag", PROXY),
    Spec("proxy_cache_convert_head", HSL, "flag", PROXY),
    Spec("proxy_cache_max_range_offset", HSL, "1", PROXY, "number"),
    Spec("proxy_ssl_server_name", HSL, "flag", PROXY),
    Spec("proxy_ssl_name", HSL, "1", PROXY),
    Spec("proxy_ssl_verify", HSL, "flag", PROXY),
    Spec("proxy_ssl_verify_depth", HSL, "1", PROXY, "number"),
    Spec("proxy_ssl_trusted_certificate", HSL, "1", PROXY),
    Spec("proxy_ssl_certificate", HSL, "1", PROXY),
    Spec("proxy_ssl_certificate_key", HSL, "1", PROXY),
    Spec("proxy_ssl_protocols", HSL, "1+", PROXY, repeat=True),
    Spec("proxy_ssl_ciphers", HSL, "1", PROXY),
    Spec("proxy_ssl_session_reuse", HSL, "flag", PROXY),
    Spec("proxy_ssl_conf_command", HSL, "2", PROXY, since=_v("1.19.4"), repeat=True),
    # fastcgi
    Spec("fastcgi_pass", "loc lif", "1", FCGI),
    Spec("fastcgi_param", HSL, "23", FCGI, repeat=True),
    Spec("fastcgi_index", HSL, "1", FCGI),
    Spec("fastcgi_split_path_info", "loc", "1", FCGI),
    Spec("fastcgi_buffering", HSL, "flag", FCGI),
    Spec("fastcgi_buffer_size", HSL, "1", FCGI, "size"),
    Spec("fastcgi_buffers", HSL, "2", FCGI, "number"),
    Spec("fastcgi_busy_buffers_size", HSL, "1", FCGI, "size"),
    Spec("fastcgi_connect_timeout", HSL, "1", FCGI, "time"),
    Spec("fastcgi_read_timeout", HSL, "1", FCGI, "time"),
    Spec("fastcgi_send_timeout", HSL, "1", FCGI, "time"),
    Spec("fastcgi_intercept_errors", HSL, "flag", FCGI),
    Spec("fastcgi_keep_conn", HSL, "flag", FCGI),
    Spec("fastcgi_hide_header", HSL, "1", FCGI, repeat=True),
    Spec("fastcgi_pass_header", HSL, "1", FCGI, repeat=True),
    Spec("fastcgi_ignore_headers", HSL, "1+", FCGI, repeat=True),
    Spec("fastcgi_next_upstream", HSL, "1+", FCGI, repeat=True),
    Spec("fastcgi_cache", HSL, "1", FCGI),
    Spec("fastcgi_cache_path", "http", "2+", FCGI, repeat=True),
    Spec("fastcgi_cache_key", HSL, "1", FCGI),
    Spec("fastcgi_cache_valid", HSL, "1+", FCGI, repeat=True),
    Spec("fastcgi_cache_lock", HSL, "flag", FCGI),
    Spec("fastcgi_cache_use_stale", HSL, "1+", FCGI, repeat=True),
    Spec("fastcgi_cache_background_update", HSL, "flag", FCGI, since=_v("1.11.10")),
    Spec("fastcgi_cache_bypass", HSL, "1+", FCGI, repeat=True),
    Spec("fastcgi_no_cache", HSL, "1+", FCGI, repeat=True),
    Spec("fastcgi_cache_methods", HSL, "1+", FCGI, repeat=True),
    Spec("fastcgi_cache_min_uses", HSL, "1", FCGI, "number"),
    Spec("fastcgi_temp_path", HSL, "1234", FCGI),
    # uwsgi / scgi
    Spec("uwsgi_pass", "loc lif", "1", UWSGI),
    Spec("uwsgi_param", HSL, "23", UWSGI, repeat=True),
    Spec("uwsgi_buffering", HSL, "flag", UWSGI),
    Spec("uwsgi_buffer_size", HSL, "1", UWSGI, "size"),
    Spec("uwsgi_buffers", HSL, "2", UWSGI, "number"),
    Spec("uwsgi_read_timeout", HSL, "1", UWSGI, "time"),
    Spec("uwsgi_send_timeout", HSL, "1", UWSGI, "time"),
    Spec("uwsgi_connect_timeout", HSL, "1", UWSGI, "time"),
    Spec("uwsgi_cache", HSL, "1", UWSGI),
    Spec("uwsgi_cache_path", "http", "2+", UWSGI, repeat=True),
    Spec("uwsgi_cache_key", HSL, "1", UWSGI),
    Spec("uwsgi_cache_valid", HSL, "1+", UWSGI, repeat=True),
    Spec("uwsgi_temp_path", HSL, "1234", UWSGI),
    Spec("scgi_pass", "loc lif", "1", SCGI),
    Spec("scgi_param", HSL, "23", SCGI, repeat=True),
    Spec("scgi_read_timeout", HSL, "1", SCGI, "time"),
    Spec("scgi_temp_path", HSL, "1234", SCGI),
    # grpc
    Spec("grpc_pass", "loc lif", "1", GRPC, since=_v("1.13.10")),
    Spec("grpc_set_header", HSL, "2", GRPC, since=_v("1.13.10"), repeat=True),
    Spec("grpc_hide_header", HSL, "1", GRPC, since=_v("1.13.10"), repeat=True),
    Spec("grpc_read_timeout", HSL, "1", GRPC, "time", _v("1.13.10")),
    Spec("grpc_send_timeout", HSL, "1", GRPC, "time", _v("1.13.10")),
    Spec("grpc_connect_timeout", HSL, "1", GRPC, "time", _v("1.13.10")),
    Spec("grpc_buffer_size", HSL, "1", GRPC, "size", _v("1.13.10")),
    Spec("grpc_next_upstream", HSL, "1+", GRPC, since=_v("1.13.10"), repeat=True),
    Spec("grpc_intercept_errors", HSL, "flag", GRPC, since=_v("1.13.10")),
    Spec("grpc_socket_keepalive", HSL, "flag", GRPC, since=_v("1.15.6")),
    Spec("grpc_ssl_server_name", HSL, "flag", GRPC, since=_v("1.13.10")),
    Spec("grpc_ssl_verify", HSL, "flag", GRPC, since=_v("1.13.10")),
    Spec("grpc_ssl_certificate", HSL, "1", GRPC, since=_v("1.13.10")),
    Spec("grpc_ssl_certificate_key", HSL, "1", GRPC, since=_v("1.13.10")),
    Spec("grpc_ssl_protocols", HSL, "1+", GRPC, since=_v("1.13.10"), repeat=True),
    Spec("grpc_ssl_ciphers", HSL, "1", GRPC, since=_v("1.13.10")),
    Spec("grpc_ssl_conf_command", HSL, "2", GRPC, since=_v("1.19.4"), repeat=True),
    # ssl
    Spec("ssl_certificate", HS, "1", SSL, repeat=True),
    Spec("ssl_certificate_key", HS, "1", SSL, repeat=True),
    Spec("ssl_password_file", HS, "1", SSL),
    Spec("ssl_protocols", HS, "1+", SSL, repeat=True),
    Spec("ssl_ciphers", HS, "1", SSL),
    Spec("ssl_prefer_server_ciphers", HS, "flag", SSL),
    Spec("ssl_ecdh_curve", HS, "1", SSL),
    Spec("ssl_dhparam", HS, "1", SSL),
    Spec("ssl_session_cache", HS, "12", SSL, repeat=True),
    Spec("ssl_session_timeout", HS, "1", SSL, "time"),
    Spec("ssl_session_tickets", HS, "flag", SSL),
    Spec("ssl_session_ticket_key", HS, "1", SSL, repeat=True),
    Spec("ssl_stapling", HS, "flag", SSL),
    Spec("ssl_stapling_verify", HS, "flag", SSL),
    Spec("ssl_stapling_file", HS, "1", SSL),
    Spec("ssl_stapling_responder", HS, "1", SSL),
    Spec("ssl_trusted_certificate", HS, "1", SSL),
    Spec("ssl_client_certificate", HS, "1", SSL),
    Spec("ssl_verify_client", HS, "1", SSL),
    Spec("ssl_verify_depth", HS, "1", SSL, "number"),
    Spec("ssl_crl", HS, "1", SSL),
    Spec("ssl_buffer_size", HS, "1", SSL, "size"),
    Spec("ssl_early_data", HS, "flag", SSL, since=_v("1.15.3")),
    Spec("ssl_reject_handshake", HS, "flag", SSL, since=_v("1.19.4")),
    Spec("ssl_conf_command", HS, "2", SSL, since=_v("1.19.4"), repeat=True),
    Spec("ssl_ocsp", HS, "1", SSL, since=_v("1.19.0")),
    Spec("ssl_ocsp_cache", HS, "1", SSL, since=_v("1.19.0")),
    Spec("ssl_ocsp_responder", HS, "1", SSL, since=_v("1.19.0")),
    Spec("ssl_certificate_cache", HS, "123", SSL, since=_v("1.27.4")),
    # http2
    Spec("http2", HS, "flag", H2, since=_v("1.25.1")),
    Spec("http2_chunk_size", HSL, "1", H2, "size"),
    Spec("http2_body_preread_size", HS, "1", H2, "size", _v("1.11.0")),
    Spec("http2_max_concurrent_streams", HS, "1", H2, "number"),
    Spec("http2_recv_buffer_size", "http", "1", H2, "size"),
    Spec("http2_streams_index_size", HS, "1", H2, "number"),
    Spec("http2_max_concurrent_pushes", HS, "1", H2, "number", _v("1.13.9"), _v("1.25.1")),
    Spec("http2_push", HSL, "1", H2, since=_v("1.13.9"), deprecated=_v("1.25.1"), repeat=True),
    Spec("http2_push_preload", HSL, "flag", H2, since=_v("1.13.9"), deprecated=_v("1.25.1")),
    Spec("http2_idle_timeout", HS, "1", H2, "time", deprecated=_v("1.19.7")),
    Spec("http2_recv_timeout", HS, "1", H2, "time", deprecated=_v("1.19.7")),
    Spec("http2_max_requests", HS, "1", H2, "number", _v("1.11.6"), _v("1.19.7")),
    Spec("http2_max_field_size", HS, "1", H2, "size", deprecated=_v("1.19.7")),
    Spec("http2_max_header_size", HS, "1", H2, "size", deprecated=_v("1.19.7")),
    # http3 / quic
    Spec("http3", HS, "flag", H3, since=_v("1.25.0")),
    Spec("http3_hq", HS, "flag", H3, since=_v("1.25.0")),
    Spec("http3_max_concurrent_streams", HS, "1", H3, "number", _v("1.25.0")),
    Spec("http3_stream_buffer_size", HS, "1", H3, "size", _v("1.25.0")),
    Spec("quic_retry", HS, "flag", H3, since=_v("1.25.0")),
    Spec("quic_gso", HS, "flag", H3, since=_v("1.25.0")),
    Spec("quic_host_key", HS, "1", H3, since=_v("1.25.0")),
    Spec("quic_active_connection_id_limit", HS, "1", H3, "number", _v("1.25.0")),
    Spec("quic_bpf", "main", "flag", H3, since=_v("1.25.0")),
    # gzip and gzip_static
    Spec("gzip", HSLI, "flag", GZIP),
    Spec("gzip_comp_level", HSL, "1", GZIP, "number"),
    Spec("gzip_min_length", HSL, "1", GZIP, "size"),
    Spec("gzip_types", HSL, "1+", GZIP, repeat=True),
    Spec("gzip_vary", HSL, "flag", GZIP),
    Spec("gzip_proxied", HSL, "1+", GZIP, repeat=True),
    Spec("gzip_buffers", HSL, "2", GZIP, "number"),
    Spec("gzip_http_version", HSL, "1", GZIP),
    Spec("gzip_disable", HSL, "1+", GZIP, repeat=True),
    Spec("gzip_static", HSL, "1", "http_gzip_static_module"),
    Spec("gunzip", HSL, "flag", "http_gunzip_module"),
    # headers
    Spec("add_header", HSLI, "23", "http_headers_module", repeat=True),
    Spec("add_trailer", HSLI, "23", "http_headers_module", since=_v("1.13.2"), repeat=True),
    Spec("expires", HSLI, "12", "http_headers_module"),
    # rewrite
    Spec("rewrite", RW, "23", REWRITE, repeat=True),
    Spec("return", RW, "12", REWRITE, repeat=True),
    Spec("set", RW, "2", REWRITE, repeat=True),
    Spec("if", "srv loc", "1+", REWRITE, repeat=True),
    Spec("break", RW, "0", REWRITE, repeat=True),
    Spec("rewrite_log", "http srv sif loc lif", "flag", REWRITE),
    Spec("uninitialized_variable_warn", "http srv sif loc lif", "flag", REWRITE),
    # access, auth
    Spec("allow", "http srv loc lmt", "1", "http_access_module", repeat=True),
    Spec("deny", "http srv loc lmt", "1", "http_access_module", repeat=True),
    Spec("auth_basic", "http srv loc lmt", "1", "http_auth_basic_module"),
    Spec("auth_basic_user_file", "http srv loc lmt", "1", "http_auth_basic_module"),
    Spec("auth_request", HSL, "1", "http_auth_request_module"),
    Spec("auth_request_set", HSL, "2", "http_auth_request_module", repeat=True),
    # limits
    Spec("limit_req_zone", "http", "3+", "http_limit_req_module", repeat=True),
    Spec("limit_req", HSL, "1+", "http_limit_req_module", repeat=True),
    Spec("limit_req_status", HSL, "1", "http_limit_req_module", "number"),
    Spec("limit_req_log_level", HSL, "1", "http_limit_req_module"),
    Spec("limit_req_dry_run", HSL, "flag", "http_limit_req_module", since=_v("1.17.1")),
    Spec("limit_conn_zone", "http", "2", "http_limit_conn_module", repeat=True),
    Spec("limit_conn", HSL, "2", "http_limit_conn_module", repeat=True),
    Spec("limit_conn_status", HSL, "1", "http_limit_conn_module", "number"),
    Spec("limit_conn_log_level", HSL, "1", "http_limit_conn_module"),
    Spec("limit_conn_dry_run", HSL, "flag", "http_limit_conn_module", since=_v("1.17.6")),
    Spec("limit_zone", "http", "3", "http_limit_conn_module", removed=_v("1.7.6")),
    # log
    Spec("access_log", "http srv loc lif lmt", "1+", LOG, repeat=True),
    Spec("log_format", "http", "2+", LOG, repeat=True),
    Spec("open_log_file_cache", HSL, "1234", LOG),
    # map, geo, split_clients
    Spec("map", "http", "2", "http_map_module", repeat=True),
    Spec("map_hash_max_size", "http", "1", "http_map_module", "number"),
    Spec("map_hash_bucket_size", "http", "1", "http_map_module", "number"),
    Spec("geo", "http", "12", "http_geo_module", repeat=True),
    Spec("split_clients", "http", "2", "http_split_clients_module", repeat=True),
    # realip, stub_status, sub_filter, misc http modules
    Spec("set_real_ip_from", HSL, "1", "http_realip_module", repeat=True),
    Spec("real_ip_header", HSL, "1", "http_realip_module"),
    Spec("real_ip_recursive", HSL, "flag", "http_realip_module"),
    Spec("stub_status", "srv loc", "01", "http_stub_status_module", repeat=True),
    Spec("sub_filter", HSL, "2", "http_sub_module", repeat=True),
    Spec("sub_filter_once", HSL, "flag", "http_sub_module"),
    Spec("sub_filter_types", HSL, "1+", "http_sub_module", repeat=True),
    Spec("sub_filter_last_modified", HSL, "flag", "http_sub_module"),
    Spec("autoindex", HSL, "flag", "http_autoindex_module"),
    Spec("autoindex_exact_size", HSL, "flag", "http_autoindex_module"),
    Spec("autoindex_format", HSL, "1", "http_autoindex_module"),
    Spec("autoindex_localtime", HSL, "flag", "http_autoindex_module"),
    Spec("charset", HSLI, "1", "http_charset_module"),
    Spec("source_charset", HSLI, "1", "http_charset_module"),
    Spec("charset_types", HSL, "1+", "http_charset_module", repeat=True),
    Spec("charset_map", "http", "2", "http_charset_module", repeat=True),
    Spec("ssi", HSLI, "flag", "http_ssi_module"),
    Spec("mirror", HSL, "1", "http_mirror_module", since=_v("1.13.4"), repeat=True),
    Spec("mirror_request_body", HSL, "flag", "http_mirror_module", since=_v("1.13.4")),
    Spec("empty_gif", "loc", "0", "http_empty_gif_module"),
    Spec("valid_referers", SL, "1+", "http_referer_module", repeat=True),
    Spec("secure_link", HSL, "1", "http_secure_link_module"),
    Spec("secure_link_md5", HSL, "1", "http_secure_link_module"),
    Spec("secure_link_secret", "loc", "1", "http_secure_link_module"),
    Spec("slice", HSL, "1", "http_slice_module", "size"),
    Spec("dav_methods", HSL, "1+", "http_dav_module", repeat=True),
    Spec("create_full_put_path", HSL, "flag", "http_dav_module"),
    Spec("memcached_pass", "loc lif", "1", "http_memcached_module"),
    Spec("userid", HSL, "1", "http_userid_module"),
    Spec("userid_name", HSL, "1", "http_userid_module"),
    Spec("userid_domain", HSL, "1", "http_userid_module"),
    Spec("userid_path", HSL, "1", "http_userid_module"),
    Spec("userid_expires", HSL, "1", "http_userid_module"),
    # stream core, proxy, ssl
    Spec("listen", "ssrv", "1+", STREAM, repeat=True),
    Spec("server_name", "ssrv", "1+", STREAM, since=_v("1.25.5"), repeat=True),
    Spec("resolver", SS, "1+", STREAM),
    Spec("resolver_timeout", SS, "1", STREAM, "time"),
    Spec("tcp_nodelay", SS, "flag", STREAM),
    Spec("preread_buffer_size", SS, "1", STREAM, "size"),
    Spec("preread_timeout", SS, "1", STREAM, "time"),
    Spec("proxy_protocol_timeout", SS, "1", STREAM, "time"),
    Spec("variables_hash_max_size", "stream", "1", STREAM, "number"),
    Spec("variables_hash_bucket_size", "stream", "1", STREAM, "number"),
    Spec("proxy_pass", "ssrv", "1", STREAM_PROXY),
    Spec("proxy_timeout", SS, "1", STREAM_PROXY, "time"),
    Spec("proxy_connect_timeout", SS, "1", STREAM_PROXY, "time"),
    Spec("proxy_buffer_size", SS, "1", STREAM_PROXY, "size"),
    Spec("proxy_protocol", SS, "flag", STREAM_PROXY),
    Spec("proxy_responses", SS, "1", STREAM_PROXY, "number"),
    Spec("proxy_requests", SS, "1", STREAM_PROXY, "number", _v("1.15.7")),
    Spec("proxy_next_upstream", SS, "flag", STREAM_PROXY, repeat=True),
    Spec("proxy_next_upstream_tries", SS, "1", STREAM_PROXY, "number"),
    Spec("proxy_next_upstream_timeout", SS, "1", STREAM_PROXY, "time"),
    Spec("proxy_bind", SS, "12", STREAM_PROXY),
    Spec("proxy_socket_keepalive", SS, "flag", STREAM_PROXY, since=_v("1.15.6")),
    Spec("proxy_ssl", SS, "flag", STREAM_PROXY),
    Spec("proxy_ssl_server_name", SS, "flag", STREAM_PROXY),
    Spec("proxy_ssl_name", SS, "1", STREAM_PROXY),
    Spec("proxy_ssl_verify", SS, "flag", STREAM_PROXY),
    Spec("proxy_ssl_protocols", SS, "1+", STREAM_PROXY, repeat=True),
    Spec("proxy_ssl_ciphers", SS, "1", STREAM_PROXY),
    Spec("proxy_ssl_certificate", SS, "1", STREAM_PROXY),
    Spec("proxy_ssl_certificate_key", SS, "1", STREAM_PROXY),
    Spec("proxy_ssl_trusted_certificate", SS, "1", STREAM_PROXY),
    Spec("proxy_ssl_conf_command", SS, "2", STREAM_PROXY, since=_v("1.19.4"), repeat=True),
    Spec("ssl_certificate", SS, "1", STREAM_SSL, repeat=True),
    Spec("ssl_certificate_key", SS, "1", STREAM_SSL, repeat=True),
    Spec("ssl_protocols", SS, "1+", STREAM_SSL, repeat=True),
    Spec("ssl_ciphers", SS, "1", STREAM_SSL),
    Spec("ssl_prefer_server_ciphers", SS, "flag", STREAM_SSL),
    Spec("ssl_session_cache", SS, "12", STREAM_SSL, repeat=True),
    Spec("ssl_session_timeout", SS, "1", STREAM_SSL, "time"),
    Spec("ssl_session_tickets", SS, "flag", STREAM_SSL),
    Spec("ssl_handshake_timeout", SS, "1", STREAM_SSL, "time"),
    Spec("ssl_reject_handshake", SS, "flag", STREAM_SSL, since=_v("1.25.5")),
    Spec("ssl_conf_command", SS, "2", STREAM_SSL, since=_v("1.19.4"), repeat=True),
    Spec("ssl_preread", SS, "flag", "stream_ssl_preread_module"),
    Spec("allow", SS, "1", "stream_access_module", repeat=True),
    Spec("deny", SS, "1", "stream_access_module", repeat=True),
    Spec("access_log", SS, "1+", "stream_log_module", repeat=True),
    Spec("log_format", "stream", "2+", "stream_log_module", repeat=True),
    Spec("limit_conn_zone", "stream", "2", "stream_limit_conn_module", repeat=True),
    Spec("limit_conn", SS, "2", "stream_limit_conn_module", repeat=True),
    Spec("map", "stream", "2", "stream_map_module", repeat=True),
    Spec("geo", "stream", "12", "stream_geo_module", repeat=True),
    Spec("split_clients", "stream", "2", "stream_split_clients_module", repeat=True),
    Spec("return", "ssrv", "1", "stream_return_module"),
    Spec("set", "ssrv", "2", "stream_set_module", since=_v("1.19.3"), repeat=True),
    Spec("set_real_ip_from", "ssrv", "1", "stream_realip_module", repeat=True),
    # mail basics
    Spec("listen", "msrv", "1+", MAIL, repeat=True),
    Spec("server_name", MS, "1", MAIL),
    Spec("protocol", "msrv", "1", MAIL),
    Spec("auth_http", MS, "1", "mail_auth_http_module"),
    Spec("auth_http_header", MS, "2", "mail_auth_http_module", repeat=True),
    Spec("auth_http_timeout", MS, "1", "mail_auth_http_module", "time"),
    Spec("proxy_pass_error_message", MS, "flag", "mail_proxy_module"),
    Spec("proxy_timeout", MS, "1", "mail_proxy_module", "time"),
    Spec("xclient", MS, "flag", "mail_proxy_module"),
    Spec("smtp_auth", MS, "1+", "mail_smtp_module", repeat=True),
    Spec("smtp_capabilities", MS, "1+", "mail_smtp_module", repeat=True),
    Spec("imap_capabilities", MS, "1+", "mail_imap_module", repeat=True),
    Spec("pop3_capabilities", MS, "1+", "mail_pop3_module", repeat=True),
    Spec("starttls", MS, "1", "mail_ssl_module"),
    Spec("resolver", MS, "1+", MAIL),
    Spec("ssl_certificate", MS, "1", "mail_ssl_module", repeat=True),
    Spec("ssl_certificate_key", MS, "1", "mail_ssl_module", repeat=True),
    Spec("ssl_protocols", MS, "1+", "mail_ssl_module", repeat=True),
    Spec("ssl_ciphers", MS, "1", "mail_ssl_module"),
)


def _index(rows: tuple[Spec, ...]) -> dict[str, tuple[Spec, ...]]:
    table: dict[str, list[Spec]] = {}
    for row in rows:
        table.setdefault(row.name, []).append(row)
    return {name: tuple(specs) for name, specs in table.items()}


TABLE: dict[str, tuple[Spec, ...]] = _index(_ROWS)

# Directives whose block body is opaque text (third-party Lua module and the like).
RAW_BLOCK_SUFFIX = "_by_lua_block"


def specs(name: str) -> tuple[Spec, ...]:
    """Every table row for a directive name (one per module that provides it)."""
    return TABLE.get(name, ())


def is_known(name: str) -> bool:
    """Whether any module in the table provides this directive."""
    return name in TABLE


def context_code(node: Directive) -> str | None:
    """The nginx context code a directive sits in, or None inside an entry/opaque block."""
    parent = node.parent
    if parent is None:
        return "main"
    scope = parent.module_scope
    match parent.name:
        case "events" | "http" | "stream" | "mail" if parent.parent is None:
            return parent.name
        case "server":
            return {"http": "srv", "stream": "ssrv", "mail": "msrv"}.get(scope)
        case "upstream":
            return {"http": "ups", "stream": "sups"}.get(scope)
        case "location":
            return "loc"
        case "limit_except":
            return "lmt"
        case "if":
            grand = parent.parent
            if grand is not None and grand.name == "server":
                return "sif"
            return "lif" if grand is not None and grand.name == "location" else None
    return None


def matching_spec(node: Directive) -> Spec | None:
    """The table row that applies to this directive in its context, or None."""
    rows = specs(node.name)
    if not rows:
        return None
    code = context_code(node)
    for row in rows:
        if row.contexts == "*" or (code is not None and code in row.contexts.split()):
            return row
    return None


def doc_url(name: str) -> str:
    """Link to a directive's entry in the nginx documentation ('' when unknown)."""
    rows = specs(name)
    if not rows:
        return ""
    module = rows[0].module
    if module.startswith(("http_upstream_", "stream_upstream_")):
        module = module.split("_upstream_")[0] + "_upstream_module"
    page = _DOC_PAGES.get(module)
    if page is None:
        prefix = "http/" if module.startswith("http_") else ""
        if module.startswith("stream_"):
            prefix = "stream/"
        elif module.startswith("mail_"):
            prefix = "mail/"
        page = f"{prefix}ngx_{module}"
    anchor = "events" if name == "events" else name
    return f"https://nginx.org/en/docs/{page}.html#{anchor}"
