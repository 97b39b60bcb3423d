"""Generate analyzer/nginx_fleet_analyzer/directive_data.py from nginx's own module sources.

Every nginx module declares its directives in an `ngx_command_t ..._commands[]` table: the name,
a mask of the contexts it is allowed in and of its argument count, and the handler that sets it.
This script reads those tables from every release tag of a local nginx git directory (bare is
fine) and from the HEAD of third-party module repositories, and writes one row per directive and
module with its contexts, argument form, block flag, "is duplicate" behaviour, value kind (from
the stock ngx_conf_set_*_slot handlers) and the first and last nginx release that had it.

    python scripts/gen_directive_table.py /work/.mirror/nginx+nginx/repo \
        --third-party ngx_brotli=/work/.mirror/google+ngx_brotli/repo ...

Only the source text is read (git cat-file); nothing is built or run.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "analyzer/nginx_fleet_analyzer/directive_data.py"

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_PREPROC = re.compile(r"^[ \t]*#.*$", re.M)
_MODULE = re.compile(
    r"ngx_module_t\s+(\w+)\s*=\s*\{\s*(?:NGX_MODULE_V1|[^,{}]*(?:,[^,{}]*){6})\s*,"
    r"\s*&?(\w+)\s*,\s*(\w+)\s*,"
)
_COMMANDS = re.compile(r"ngx_command_t\s+(\w+)\s*\[\s*\]\s*=\s*\{(.*?)ngx_null_command", re.S)
_ENTRY = re.compile(r"\{\s*ngx_string\(\s*\"([^\"]+)\"\s*\)\s*,\s*([^,]+?)\s*,\s*(\w+)\s*,")
_FUNCTION = re.compile(r"^(\w+)\(ngx_conf_t\s*\*\s*cf\s*,[^)]*\)\s*\{(.*?)^\}", re.S | re.M)
_RELEASE = re.compile(r"^release-(\d+)\.(\d+)\.(\d+)$")
_OPTION = re.compile(r"^\s+--(with|without)-(\w+?_module)\)", re.M)

CONTEXTS = {
    "NGX_MAIN_CONF": "main",
    "NGX_EVENT_CONF": "events",
    "NGX_HTTP_MAIN_CONF": "http",
    "NGX_HTTP_SRV_CONF": "srv",
    "NGX_HTTP_LOC_CONF": "loc",
    "NGX_HTTP_UPS_CONF": "ups",
    "NGX_HTTP_SIF_CONF": "sif",
    "NGX_HTTP_LIF_CONF": "lif",
    "NGX_HTTP_LMT_CONF": "lmt",
    "NGX_STREAM_MAIN_CONF": "stream",
    "NGX_STREAM_SRV_CONF": "ssrv",
    "NGX_STREAM_UPS_CONF": "sups",
    "NGX_MAIL_MAIN_CONF": "mail",
    "NGX_MAIL_SRV_CONF": "msrv",
    "NGX_RTMP_MAIN_CONF": "rtmp",
    "NGX_RTMP_SRV_CONF": "rsrv",
    "NGX_RTMP_APP_CONF": "rapp",
    "NGX_RTMP_REC_CONF": "rrec",
}
_ANY_CONTEXT = {"NGX_ANY_CONF", "NGX_CONF_ANY_CONF"}
_IGNORED = {"NGX_DIRECT_CONF", "NGX_CONF_MULTI", "NGX_HTTP_LOC_CONF_OFFSET"}
_TAKES = {f"NGX_CONF_TAKE{n}": str(n) for n in range(1, 8)}
_TAKES.update(
    {
        "NGX_CONF_NOARGS": "0",
        "NGX_CONF_TAKE12": "12",
        "NGX_CONF_TAKE13": "13",
        "NGX_CONF_TAKE23": "23",
        "NGX_CONF_TAKE123": "123",
        "NGX_CONF_TAKE1234": "1234",
    }
)
_FLAGS = {"NGX_CONF_FLAG", "NGX_CONF_1MORE", "NGX_CONF_2MORE", "NGX_CONF_ANY", "NGX_CONF_BLOCK"}
# Value kinds the stock setters parse (ngx_conf_file.c); custom handlers say nothing here.
KINDS = {
    "ngx_conf_set_size_slot": "size",
    "ngx_conf_set_off_slot": "size",
    "ngx_conf_set_msec_slot": "time",
    "ngx_conf_set_sec_slot": "time",
    "ngx_conf_set_num_slot": "number",
}
# Modules whose directives document and build as a named group.
_CORE = {"conf", "errlog", "regex", "openssl", "thread_pool"}
_RENAMED = {
    "http_module": "http_core_module",
    "stream_module": "stream",
    "stream_core_module": "stream",
    "mail_module": "mail",
    "mail_core_module": "mail",
    "events_module": "events",
    "event_core_module": "events",
    "http_xslt_filter_module": "http_xslt_module",
}
# nginx's own modules that distributions build as loadable .so files.
NGINX_SO = {
    "http_geoip_module": ("ngx_http_geoip_module.so",),
    "http_image_filter_module": ("ngx_http_image_filter_module.so",),
    "http_xslt_module": ("ngx_http_xslt_filter_module.so",),
    "http_perl_module": ("ngx_http_perl_module.so",),
    "stream_geoip_module": ("ngx_stream_geoip_module.so",),
}
# Third-party modules whose .so is not named after the module itself.
SO_OVERRIDES = {
    "nginx-rtmp-module": "ngx_rtmp_module.so",
    "ngx_devel_kit": "ndk_http_module.so",
}


@dataclass
class Row:
    """One directive of one module, as the newest source that has it says."""

    name: str
    module: str
    contexts: str
    args: str
    block: bool
    repeat: bool
    kind: str
    first: str
    last: str
    package: str = ""
    so: tuple[str, ...] = ()


@dataclass
class Parsed:
    """What one source file declares."""

    modules: dict[str, str] = field(default_factory=dict)  # commands array -> module variable
    commands: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    duplicate_checks: set[str] = field(default_factory=set)  # handlers returning "is duplicate"
    all_modules: list[str] = field(default_factory=list)  # every module variable, with or without


class Blobs:
    """Reads git blobs through one `git cat-file --batch` process, parsing each blob once."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self.proc = subprocess.Popen(
            ["git", "--git-dir", git_dir, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.cache: dict[str, Parsed] = {}

    def parsed(self, sha: str) -> Parsed:
        """The parse of one blob."""
        if sha not in self.cache:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(sha.encode() + b"\n")
            self.proc.stdin.flush()
            header = self.proc.stdout.readline().split()
            size = int(header[2])
            data = self.proc.stdout.read(size + 1)[:size]
            self.cache[sha] = parse_source(data.decode("utf-8", "replace"))
        return self.cache[sha]

    def tree(self, ref: str, under: str = "") -> list[tuple[str, str]]:
        """(path, blob sha) of the .c files at a ref."""
        out = subprocess.run(
            ["git", "--git-dir", self.git_dir, "ls-tree", "-r", ref, *([under] if under else [])],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        files = []
        for line in out.splitlines():
            meta, path = line.split("\t", 1)
            if path.endswith(".c") and "/t/" not in f"/{path}":
                files.append((path, meta.split()[2]))
        return files

    def text(self, ref: str, path: str) -> str:
        """A file's text at a ref."""
        return subprocess.run(
            ["git", "--git-dir", self.git_dir, "show", f"{ref}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout


def parse_source(text: str) -> Parsed:
    """Module structs, command tables and duplicate-checking handlers of one C file."""
    text = _PREPROC.sub("", _COMMENT.sub("", text))
    parsed = Parsed()
    for module, _ctx, commands in _MODULE.findall(text):
        parsed.all_modules.append(module)
        if commands != "NULL":
            parsed.modules[commands] = module
    for array, body in _COMMANDS.findall(text):
        parsed.commands[array] = [
            (name, " ".join(mask.split()), handler) for name, mask, handler in _ENTRY.findall(body)
        ]
    for function, body in _FUNCTION.findall(text):
        if '"is duplicate"' in body:
            parsed.duplicate_checks.add(function)
    return parsed


def module_label(variable: str, path: str) -> str:
    """The module name configure and the docs use: ngx_http_proxy_module -> http_proxy_module."""
    name = variable.removeprefix("ngx_")
    if name.removesuffix("_module") in _CORE or name == "core_module":
        return "core"
    if "src/event/" in path and name.endswith("_module") and "quic" not in name:
        return "events"
    name = _RENAMED.get(name, name)
    if name.endswith("_filter_module") and name != "http_image_filter_module":
        # configure options and documentation pages drop "_filter": http_gzip_module.
        name = name.removesuffix("_filter_module") + "_module"
    return name


def contexts_of(mask: str) -> tuple[str, str, bool, list[str]]:
    """(context codes, argument form, block flag, unknown tokens) of a command mask."""
    tokens = [t.strip() for t in mask.split("|") if t.strip()]
    codes: list[str] = []
    takes: set[str] = set()
    flags: set[str] = set()
    unknown: list[str] = []
    for token in tokens:
        if token in CONTEXTS:
            codes.append(CONTEXTS[token])
        elif token in _ANY_CONTEXT:
            codes.append("*")
        elif token in _TAKES:
            takes.update(_TAKES[token])
        elif token in _FLAGS:
            flags.add(token)
        elif token not in _IGNORED:
            unknown.append(token)
    # The order ngx_conf_handler() tests the argument bits in.
    if "NGX_CONF_ANY" in flags:
        form = "*"
    elif "NGX_CONF_FLAG" in flags:
        form = "flag"
    elif "NGX_CONF_1MORE" in flags:
        form = "1+"
    elif "NGX_CONF_2MORE" in flags:
        form = "2+"
    else:
        form = "".join(sorted(takes)) or "0"
    contexts = "*" if "*" in codes else " ".join(dict.fromkeys(codes))
    return contexts, form, "NGX_CONF_BLOCK" in flags, unknown


def rows_of(
    files: list[tuple[str, Parsed]], version: str, unknown: set[str], stock: set[str]
) -> dict[tuple[str, str, bool], Row]:
    """Rows of one source tree (one nginx release, or one third-party module); `stock`: nginx's
    own handlers that return "is duplicate" (the ngx_conf_set_*_slot setters modules reuse)."""
    duplicates: set[str] = set(stock)
    for _path, parsed in files:
        duplicates |= parsed.duplicate_checks
    rows: dict[tuple[str, str, bool], Row] = {}
    for path, parsed in files:
        for array, entries in parsed.commands.items():
            variable = parsed.modules.get(array)
            if variable is None:
                continue
            module = module_label(variable, path) if version else variable.removeprefix("ngx_")
            for name, mask, handler in entries:
                contexts, form, block, bad = contexts_of(mask)
                unknown.update(bad)
                if not contexts:
                    continue
                row = Row(
                    name,
                    module,
                    contexts,
                    form,
                    block,
                    # Only the generic *_slot setters refuse a second value unconditionally;
                    # a custom handler's "is duplicate" is often for one mix of values only.
                    repeat=not (handler.endswith("_slot") and handler in duplicates),
                    kind=KINDS.get(handler, ""),
                    first=version,
                    last=version,
                )
                rows.setdefault((name, module, block), row)
    return rows


def release_tags(blobs: Blobs, since: tuple[int, ...]) -> list[str]:
    """Release tags from `since` on, oldest first."""
    out = subprocess.run(
        ["git", "--git-dir", blobs.git_dir, "tag", "--list", "release-*"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    tags = []
    for tag in out.split():
        match = _RELEASE.match(tag)
        if match and tuple(int(p) for p in match.groups()) >= since:
            tags.append((tuple(int(p) for p in match.groups()), tag))
    return [tag for _v, tag in sorted(tags)]


def nginx_rows(
    git_dir: str, since: tuple[int, ...], stock: set[str]
) -> tuple[list[Row], list[str], list[str]]:
    """Rows of every nginx release, with first/last versions; the tags; optional modules.
    Fills `stock` with the newest release's duplicate-checking handlers."""
    blobs = Blobs(git_dir)
    tags = release_tags(blobs, since)
    merged: dict[tuple[str, str, bool], Row] = {}
    unknown: set[str] = set()
    for tag in tags:
        version = tag.removeprefix("release-")
        files = [(path, blobs.parsed(sha)) for path, sha in blobs.tree(tag, "src")]
        stock.clear()
        for _path, parsed in files:
            stock |= parsed.duplicate_checks
        for key, row in rows_of(files, version, unknown, set()).items():
            old = merged.get(key)
            if old is None:
                merged[key] = row
            else:
                # The newest release says the contexts and arity; the oldest says since when.
                row.first = old.first
                merged[key] = row
    if unknown:
        print(f"nginx: unknown mask tokens {sorted(unknown)}", file=sys.stderr)
    options = blobs.text(tags[-1], "auto/options")
    optional = sorted(
        _RENAMED.get(name, name) for kind, name in _OPTION.findall(options) if kind == "with"
    )
    rows = list(merged.values())
    for row in rows:
        row.so = NGINX_SO.get(row.module, ())
        if not row.so and row.module.startswith(("stream", "mail")):
            # --with-stream=dynamic / --with-mail=dynamic build one .so for the whole family.
            row.so = (f"ngx_{row.module.split('_')[0]}_module.so",)
    return rows, [t.removeprefix("release-") for t in tags], optional


def so_name(package: str, module: str) -> str:
    """The .so a dynamic build of this third-party module makes."""
    if module.startswith("ndk_"):
        return "ndk_http_module.so"
    return SO_OVERRIDES.get(package, f"ngx_{module}.so")


def third_party_rows(
    package: str, git_dir: str, stock: set[str]
) -> tuple[list[Row], str, list[str]]:
    """Rows of a third-party module's HEAD, labelled with its package and .so names; the commit;
    every .so name its modules make (directives or not)."""
    blobs = Blobs(git_dir)
    commit = subprocess.run(
        ["git", "--git-dir", git_dir, "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    files = [(path, blobs.parsed(sha)) for path, sha in blobs.tree("HEAD")]
    unknown: set[str] = set()
    rows = list(rows_of(files, "", unknown, stock).values())
    if unknown:
        print(f"{package}: unknown mask tokens {sorted(unknown)}", file=sys.stderr)
    for row in rows:
        row.first = row.last = ""
        row.package = package
        row.so = (so_name(package, row.module),)
    names = sorted(
        {so_name(package, m.removeprefix("ngx_")) for _p, f in files for m in f.all_modules}
    )
    return rows, commit, names


def render(
    rows: list[Row],
    tags: list[str],
    optional: list[str],
    packages: list[str],
    so_names: list[tuple[str, str]],
    command: list[str],
) -> str:
    """The data module's text."""
    lines = [
        "# ruff: noqa: E501",
        '"""Generated by scripts/gen_directive_table.py from module sources; do not edit.',
        "",
        f"nginx releases read: {len(tags)} release tags, {tags[0]} to {tags[-1]}.",
        "Third-party modules read (package commit):",
        *(f"  {p}" for p in packages),
        "Regenerate (git directories of github.com/nginx/nginx and of each module's repository):",
        *command,
        "",
        "ROWS: one line per directive and module, fields separated by one space ('-' = empty):",
        "  name contexts(comma-separated codes) args module flags(B: block, R: may repeat)",
        "  kind first last (first/last nginx release that had it; '-' for third-party rows)",
        "  package (third-party project) so (comma-separated .so files that load it)",
        '"""',
        "",
        f"FIRST_RELEASE = {tags[0]!r}",
        f"LAST_RELEASE = {tags[-1]!r}",
        f"RELEASES = {' '.join(tags)!r}",
        f"OPTIONAL_MODULES = frozenset({tuple(optional)!r})",
        f"PACKAGES = {tuple(packages)!r}",
        "# Every .so the third-party modules build (some load no directives: ndk), by package.",
        f"SO_NAMES = {tuple(so_names)!r}",
        "",
        'ROWS = """\\',
    ]
    for r in sorted(rows, key=lambda r: (r.package, r.module, r.name, r.block)):
        flags = ("B" if r.block else "") + ("R" if r.repeat else "")
        fields = [r.name, r.contexts.replace(" ", ","), r.args, r.module, flags, r.kind]
        fields += [r.first, r.last, r.package, ",".join(r.so)]
        lines.append(" ".join(f or "-" for f in fields))
    lines.append('"""')
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Read the sources and write the data module."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nginx_git", help="git directory of nginx's sources (github nginx/nginx)")
    parser.add_argument(
        "--third-party",
        action="append",
        default=[],
        metavar="PACKAGE=GIT_DIR",
        help="a third-party module's git directory, under its package (repository) name",
    )
    parser.add_argument("--since", default="1.0.0", help="oldest release read (default 1.0.0)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    since = tuple(int(p) for p in args.since.split("."))
    stock: set[str] = set()
    rows, tags, optional = nginx_rows(args.nginx_git, since, stock)
    packages: list[str] = []
    so_names: set[tuple[str, str]] = set()
    for spec in args.third_party:
        package, git_dir = spec.split("=", 1)
        extra, commit, names = third_party_rows(package, git_dir, stock)
        rows.extend(extra)
        packages.append(f"{package} {commit}")
        so_names.update((name, package) for name in names)
    command = ["  python scripts/gen_directive_table.py " + args.nginx_git + " \\"]
    command += [f"    --third-party {spec} \\" for spec in args.third_party]
    command[-1] = command[-1].removesuffix(" \\")
    text = render(rows, tags, optional, packages, sorted(so_names), command)
    args.out.write_text(text)
    # The committed file is in the project's format; without ruff the content is the same.
    subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(args.out)], check=False)
    print(f"{len(rows)} rows, {len(tags)} releases -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
