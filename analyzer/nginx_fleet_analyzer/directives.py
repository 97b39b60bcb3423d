"""The directive table: contexts, argument forms, versions and the providing module.

The rows come from nginx's own module sources (every release's command tables) and from the
sources of common third-party modules, generated into directive_data.py by
scripts/gen_directive_table.py; a small hand-kept overlay below adds value kinds, "is duplicate"
facts of custom handlers and deprecations the sources do not state.

Context codes follow nginx's own configuration masks:
  main, events; http (http block), srv (http server), loc (location), ups (http upstream),
  sif / lif (`if` in server / in location), lmt (limit_except);
  stream, ssrv, sups (stream block, its server, its upstream); mail, msrv;
  rtmp, rsrv, rapp, rrec (the third-party RTMP module's block, server, application, recorder).
Argument forms: the allowed counts as digits ('0', '1', '12' = one or two, '01', '123', ...),
  '1+', '2+', '*' (any), 'flag' (on | off), as nginx's NGX_CONF_* argument masks say.
A value kind ('size', 'time', 'number', 'auto_number', 'size_off') is checked on the arguments
  of a one-argument directive and on the first argument otherwise.
"""

from __future__ import annotations

from functools import cache
from itertools import pairwise

from nginx_fleet_analyzer import directive_data as _data
from nginx_fleet_analyzer.facts import Version
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.record import Record


class Spec(Record):
    """One row of the directive table."""

    __slots__ = (
        "args",
        "block",
        "bounds",
        "contexts",
        "deprecated",
        "kind",
        "last",
        "module",
        "name",
        "package",
        "removed",
        "repeat",
        "since",
        "so",
    )

    name: str
    contexts: str
    args: str
    module: str
    kind: str
    since: Version | None
    deprecated: Version | None
    removed: Version | None
    # True: may appear several times in one block; False: "is duplicate"; None: decided by form.
    repeat: bool | None
    # Whether nginx wants a { block } after it.
    block: bool
    # Last nginx release that had it (None: still in the newest release read).
    last: Version | None
    # Third-party module project ('' for nginx's own modules) and the .so files that load it.
    package: str
    so: tuple[str, ...]
    # (lowest, highest) a number argument may take, where the module checks it at load time.
    bounds: tuple[int, int] | None

    def __init__(
        self,
        name: str,
        contexts: str,
        args: str,
        module: str,
        kind: str = "",
        since: Version | None = None,
        deprecated: Version | None = None,
        removed: Version | None = None,
        repeat: bool | None = None,
        block: bool = False,
        last: Version | None = None,
        package: str = "",
        so: tuple[str, ...] = (),
        bounds: tuple[int, int] | None = None,
    ) -> None:
        self.name = name
        self.contexts = contexts
        self.args = args
        self.module = module
        self.kind = kind
        self.since = since
        self.deprecated = deprecated
        self.removed = removed
        self.repeat = repeat
        self.block = block
        self.last = last
        self.package = package
        self.so = so
        self.bounds = bounds


# Modules compiled in unless `--without-…` (kept for callers; OPTIONAL_MODULES is the test now).
DEFAULT_MODULES = frozenset(
    {
        "core",
        "events",
        "http_core_module",
        "http_upstream_module",
        "http_proxy_module",
        "http_fastcgi_module",
        "http_uwsgi_module",
        "http_scgi_module",
        "http_grpc_module",
        "http_gzip_module",
        "http_rewrite_module",
        "http_log_module",
        "stream_proxy_module",
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
    "core": "ngx_core_module",
    "events": "ngx_core_module",
    "stream": "stream/ngx_stream_core_module",
    "mail": "mail/ngx_mail_core_module",
    "http_copy_module": "http/ngx_http_core_module",
    "quic_bpf_module": "http/ngx_http_v3_module",
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


# Value kinds of directives whose custom handlers parse a size, time or number.
_KINDS: dict[tuple[str, str], str] = {
    ("worker_processes", "core"): "auto_number",
    ("worker_connections", "events"): "number",
    ("worker_rlimit_nofile", "core"): "number",
    ("directio", "http_core_module"): "size_off",
    ("keepalive_timeout", "http_core_module"): "time",
    ("limit_rate", "http_core_module"): "size",
    ("limit_rate_after", "http_core_module"): "size",
    ("keepalive", "http_upstream_keepalive_module"): "number",
    ("proxy_buffers", "http_proxy_module"): "number",
    ("proxy_limit_rate", "http_proxy_module"): "size",
    ("fastcgi_buffers", "http_fastcgi_module"): "number",
    ("uwsgi_buffers", "http_uwsgi_module"): "number",
    ("scgi_buffers", "http_scgi_module"): "number",
    ("grpc_buffers", "http_grpc_module"): "number",
    ("gzip_buffers", "http_gzip_module"): "number",
    ("http2_max_concurrent_pushes", "http_v2_module"): "number",
    ("http2_idle_timeout", "http_v2_module"): "time",
    ("http2_recv_timeout", "http_v2_module"): "time",
    ("http2_max_requests", "http_v2_module"): "number",
    ("http2_max_field_size", "http_v2_module"): "size",
    ("http2_max_header_size", "http_v2_module"): "size",
}

# Numbers a module checks with ngx_conf_check_num_bounds (the command's post handler; the
# generated table has the setter, not its post): nginx -t refuses a value outside them.
_BOUNDS: dict[tuple[str, str], tuple[int, int]] = {
    ("gzip_comp_level", "http_gzip_module"): (1, 9),
    ("limit_conn_status", "http_limit_conn_module"): (400, 599),
    ("limit_req_status", "http_limit_req_module"): (400, 599),
    ("uwsgi_modifier1", "http_uwsgi_module"): (0, 255),
    ("uwsgi_modifier2", "http_uwsgi_module"): (0, 255),
    # ngx_brotli: BROTLI_MIN_QUALITY to BROTLI_MAX_QUALITY.
    ("brotli_comp_level", "http_brotli_filter_module"): (0, 11),
}

# Custom handlers that answer "is duplicate" to a second occurrence (the generated table only
# knows this of the stock ngx_conf_set_*_slot setters).
_ONCE = frozenset(
    {
        ("worker_processes", "core"),
        ("worker_priority", "core"),
        ("worker_cpu_affinity", "core"),
        ("user", "core"),
        ("ssl_engine", "core"),
        ("events", "events"),
        ("http", "http_core_module"),
        ("stream", "stream"),
        ("mail", "mail"),
        ("worker_connections", "events"),
        ("use", "events"),
        ("root", "http_core_module"),
        ("alias", "http_core_module"),
        ("try_files", "http_core_module"),
        ("try_files", "http_try_files_module"),
        ("aio", "http_core_module"),
        ("directio", "http_core_module"),
        ("keepalive_timeout", "http_core_module"),
        ("internal", "http_core_module"),
        ("limit_rate", "http_core_module"),
        ("limit_rate_after", "http_core_module"),
        ("limit_except", "http_core_module"),
        ("resolver", "http_core_module"),
        ("open_file_cache", "http_core_module"),
        ("disable_symlinks", "http_core_module"),
        ("ssl", "http_ssl_module"),
        ("zone", "http_upstream_zone_module"),
        ("zone", "stream_upstream_zone_module"),
        ("keepalive", "http_upstream_keepalive_module"),
        ("resolver", "http_upstream_module"),
        ("proxy_pass", "http_proxy_module"),
        ("proxy_limit_rate", "http_proxy_module"),
        ("proxy_store", "http_proxy_module"),
        ("proxy_cache", "http_proxy_module"),
        ("proxy_cache_key", "http_proxy_module"),
        ("fastcgi_pass", "http_fastcgi_module"),
        ("fastcgi_split_path_info", "http_fastcgi_module"),
        ("fastcgi_cache", "http_fastcgi_module"),
        ("fastcgi_cache_key", "http_fastcgi_module"),
        ("uwsgi_pass", "http_uwsgi_module"),
        ("uwsgi_cache", "http_uwsgi_module"),
        ("uwsgi_cache_key", "http_uwsgi_module"),
        ("scgi_pass", "http_scgi_module"),
        ("grpc_pass", "http_grpc_module"),
        ("ssl_password_file", "http_ssl_module"),
        ("ssl_ocsp_cache", "http_ssl_module"),
        ("ssl_certificate_cache", "http_ssl_module"),
        ("http2_max_concurrent_pushes", "http_v2_module"),
        ("http2_push_preload", "http_v2_module"),
        ("http2_idle_timeout", "http_v2_module"),
        ("http2_recv_timeout", "http_v2_module"),
        ("http2_max_requests", "http_v2_module"),
        ("http2_max_field_size", "http_v2_module"),
        ("http2_max_header_size", "http_v2_module"),
        ("quic_host_key", "http_v3_module"),
        ("expires", "http_headers_module"),
        ("auth_basic_user_file", "http_auth_basic_module"),
        ("auth_request", "http_auth_request_module"),
        ("limit_zone", "http_limit_conn_module"),
        ("limit_zone", "http_limit_zone_module"),
        ("open_log_file_cache", "http_log_module"),
        ("real_ip_header", "http_realip_module"),
        ("empty_gif", "http_empty_gif_module"),
        ("memcached_pass", "http_memcached_module"),
        ("userid_expires", "http_userid_module"),
        ("resolver", "stream"),
        ("proxy_pass", "stream_proxy_module"),
        ("proxy_bind", "stream_proxy_module"),
        ("return", "stream_return_module"),
        ("protocol", "mail"),
        ("auth_http", "mail_auth_http_module"),
        ("starttls", "mail_ssl_module"),
        ("resolver", "mail"),
    }
)

# Deprecated (still accepted, with a warning) and removed releases the sources do not state.
_DEPRECATED: dict[tuple[str, str], tuple[_V, _V | None]] = {
    ("ssl", "http_ssl_module"): (_v("1.15.0"), _v("1.25.1")),
    ("http2_max_concurrent_pushes", "http_v2_module"): (_v("1.25.1"), None),
    ("http2_push", "http_v2_module"): (_v("1.25.1"), None),
    ("http2_push_preload", "http_v2_module"): (_v("1.25.1"), None),
    ("http2_idle_timeout", "http_v2_module"): (_v("1.19.7"), None),
    ("http2_recv_timeout", "http_v2_module"): (_v("1.19.7"), None),
    ("http2_max_requests", "http_v2_module"): (_v("1.19.7"), None),
    ("http2_max_field_size", "http_v2_module"): (_v("1.19.7"), None),
    ("http2_max_header_size", "http_v2_module"): (_v("1.19.7"), None),
}

# Modules that need a `--with-…` configure option (nginx's own auto/options).
OPTIONAL_MODULES: frozenset[str] = _data.OPTIONAL_MODULES
# Third-party module projects the table covers (name and commit).
PACKAGES: tuple[str, ...] = _data.PACKAGES
FIRST_RELEASE: Version = _v(_data.FIRST_RELEASE)
LAST_RELEASE: Version = _v(_data.LAST_RELEASE)


def _row(line: str, after: dict[str, str]) -> Spec:
    """One generated row (see directive_data's docstring) as a Spec, with the overlay's facts."""
    name, contexts, args, module, flags, kind, first, last, package, so = (
        "" if f == "-" else f for f in line.split(" ")
    )
    key = (name, module)
    since = _v(first) if first and first != _data.FIRST_RELEASE else None
    gone = _v(last) if last and last != _data.LAST_RELEASE else None
    deprecated, removed = _DEPRECATED.get(key, (None, None))
    if removed is None and gone is not None and last in after:
        removed = _v(after[last])
    return Spec(
        name,
        contexts.replace(",", " "),
        args,
        module,
        _KINDS.get(key) or kind,
        since,
        deprecated,
        removed,
        False if key in _ONCE else "R" in flags,
        "B" in flags,
        gone,
        package,
        tuple(so.split(",")) if so else (),
        _BOUNDS.get(key),
    )


def _raw_rows() -> dict[str, list[str]]:
    """The generated rows' lines by directive name, unparsed (a run needs a few dozen names)."""
    by_name: dict[str, list[str]] = {}
    for line in _data.ROWS.splitlines():
        by_name.setdefault(line[: line.index(" ")], []).append(line)
    return by_name


# Parsing all ~2,000 rows at import cost a CLI run more than analysing a 300-line config, so
# rows are parsed per name on first use and cached.
_RAW: dict[str, list[str]] = _raw_rows()
_AFTER: dict[str, str] = dict(pairwise(_data.RELEASES.split()))
_SPECS: dict[str, tuple[Spec, ...]] = {}


def _order(row: Spec) -> tuple[bool, list[int]]:
    """nginx's own current rows first, then removed ones (newest first), then third-party."""
    return (row.package != "", [-p for p in row.last or (999, 0, 0)])


def specs(name: str) -> tuple[Spec, ...]:
    """Every table row for a directive name (one per module that provides it)."""
    rows = _SPECS.get(name)
    if rows is None:
        rows = tuple(sorted((_row(line, _AFTER) for line in _RAW.get(name, ())), key=_order))
        _SPECS[name] = rows
    return rows


def is_known(name: str) -> bool:
    """Whether any module in the table provides this directive."""
    return name in _RAW


def table() -> dict[str, tuple[Spec, ...]]:
    """The whole table by directive name (for checks over every row; parses them all)."""
    return {name: specs(name) for name in _RAW}


@cache
def so_files() -> frozenset[str]:
    """Every .so file name the table knows (load_module modules/X.so), nginx's and third-party."""
    # The last field of a row is its comma-separated .so files ('-' for none).
    named = (
        so
        for lines in _RAW.values()
        for line in lines
        for so in line.rsplit(" ", 1)[1].split(",")
        if so != "-"
    )
    return frozenset(named) | frozenset(name for name, _package in _data.SO_NAMES)


# Directives whose block body is opaque text (third-party Lua module and the like).
RAW_BLOCK_SUFFIX = "_by_lua_block"


def context_code(node: Directive) -> str | None:
    """The nginx context code a directive sits in, or None inside an entry/opaque block."""
    parent = node.parent
    if parent is None:
        return "main"
    scope = parent.module_scope
    match parent.name:
        case "events" | "http" | "stream" | "mail" | "rtmp" if parent.parent is None:
            return parent.name
        case "server":
            return {"http": "srv", "stream": "ssrv", "mail": "msrv", "rtmp": "rsrv"}.get(scope)
        case "application" if scope == "rtmp":
            return "rapp"
        case "recorder" if scope == "rtmp":
            return "rrec"
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
    if not rows or rows[0].package:
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
