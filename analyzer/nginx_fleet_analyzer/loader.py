"""Build a ParsedConfig from an `nginx -T` dump, a config text or a file on disk."""

from __future__ import annotations

import os
import posixpath

from nginx_fleet_analyzer.context import CONTEXTS, detect_context, wrap
from nginx_fleet_analyzer.dump import is_dump, split_dump
from nginx_fleet_analyzer.model import ConfigFile, Directive, ParsedConfig, ParseError, Unresolved
from nginx_fleet_analyzer.parser import STRUCTURE, FileTree, parse_file_text

# The command line imports this module: pathlib and glob are left out (or imported when a
# glob is met) to keep its start fast.
_GLOB_CHARS = frozenset("*?[")
# Deeper include nesting than this is a loop nginx would also fail on.
_MAX_INCLUDE_DEPTH = 32
# `context=` values: one of CONTEXTS, or AUTO to read it from the file's top-level directives.
AUTO = "auto"


def _is_glob(pattern: str) -> bool:
    return bool(_GLOB_CHARS.intersection(pattern))


class _Source:
    """Where included files come from; this base knows no file but the one given."""

    def find(self, pattern: str) -> list[str]:
        """Paths of the files an include pattern names, in the order nginx reads them."""
        return []

    def missing(self, pattern: str) -> str | None:
        """Why an include that matched nothing is not analysed; None when nothing is missed."""
        return "only this file was given"


class _DumpSource(_Source):
    """The files of an `nginx -T` dump: every file nginx read is in it."""

    def __init__(self, bodies: dict[str, str]) -> None:
        self.bodies = bodies

    def find(self, pattern: str) -> list[str]:
        return _match_paths(pattern, self.bodies)

    def missing(self, pattern: str) -> str | None:
        # nginx accepts a pattern matching no file; a plain path it read would be in the dump.
        return None if _is_glob(pattern) else "not in the dump"


class _DiskSource(_Source):
    """Files on disk, relative paths tried against each base directory in turn."""

    def __init__(self, bases: list[str], bodies: dict[str, str]) -> None:
        self.bases = bases
        self.bodies = bodies

    def _candidates(self, pattern: str) -> list[str]:
        if posixpath.isabs(pattern):
            return [pattern]
        return [posixpath.normpath(posixpath.join(base, pattern)) for base in self.bases]

    def find(self, pattern: str) -> list[str]:
        for full in self._candidates(pattern):
            if not _is_glob(full):
                if full in self.bodies or os.path.isfile(full):
                    return [full]
                continue
            import glob

            found = sorted(p for p in glob.glob(full) if os.path.isfile(p))
            if found:
                return found
        return []

    def missing(self, pattern: str) -> str | None:
        if not _is_glob(pattern):
            return "no such file"
        # An existing directory without matches is a legal empty include (conf.d/*.conf).
        if any(os.path.isdir(posixpath.dirname(full)) for full in self._candidates(pattern)):
            return None
        return "no such directory"


def parse_dump(text: str, trees: dict[tuple[str, str], FileTree] | None = None) -> ParsedConfig:
    """Parse `nginx -T` output; includes are resolved from its sections.

    `trees` keeps each file's parse by (path, text) across calls: a patched dump re-parses only
    the files a patch changed (assembling copies the trees, so they are never altered).
    """
    sections = split_dump(text)
    if not sections:
        return parse_text(text, "nginx.conf")
    cache = {} if trees is None else trees
    for path, body in sections:
        if (path, body) not in cache:
            cache[path, body] = parse_file_text(body, path)
    by_path = {path: cache[path, body] for path, body in sections}
    bodies = dict(sections)
    config = _assemble(bodies, by_path, _DumpSource(bodies), "main")
    config.from_dump = True
    return config


def parse_text(text: str, path: str = "nginx.conf", context: str = "main") -> ParsedConfig:
    """Parse a single file's text read in `context` (or AUTO); its includes stay unresolved."""
    trees = {path: parse_file_text(text, path)}
    return _assemble({path: text}, trees, _Source(), _context(context, trees[path]))


def parse_auto(text: str, path: str = "nginx.conf", context: str = AUTO) -> ParsedConfig:
    """Parse `text` as a dump when it has dump headers, else as one file named `path`."""
    return parse_dump(text) if is_dump(text) else parse_text(text, path, context)


def parse_path(path: str | os.PathLike[str], context: str = AUTO) -> ParsedConfig:
    """Parse a dump file, or a config file on disk together with the files it includes.

    A file read in a context other than main (a site file, a snippet) resolves relative
    includes against its own directory, then the one above it (the config directory of
    `sites-enabled/` or `conf.d/`): nginx resolves them against its prefix, unknown here.
    """
    main_name = os.fspath(path)
    text = read_text(_read(main_name))
    if is_dump(text):
        return parse_dump(text)
    bodies: dict[str, str] = {main_name: text}
    trees: dict[str, FileTree] = {main_name: parse_file_text(text, main_name)}
    chosen = _context(context, trees[main_name])
    base = posixpath.dirname(main_name)
    bases = [base]
    if chosen != "main" and base not in ("", ".", "/"):
        bases.append(posixpath.dirname(base) or ".")
    source = _DiskSource(bases, bodies)
    _load_includes(trees[main_name].directives, source, bodies, trees, depth=0)
    return _assemble(bodies, trees, source, chosen)


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def read_text(data: bytes) -> str:
    """Decode config bytes as UTF-8; undecodable bytes become U+FFFD (reported as binary)."""
    return data.decode("utf-8", errors="replace")


def _context(wanted: str, tree: FileTree) -> str:
    if wanted == AUTO:
        return detect_context(tree.directives)
    if wanted not in CONTEXTS:
        raise ValueError(f"context must be one of {', '.join(CONTEXTS)} or {AUTO}: {wanted!r}")
    return wanted


def _load_includes(
    nodes: list[Directive],
    source: _Source,
    bodies: dict[str, str],
    trees: dict[str, FileTree],
    depth: int,
) -> None:
    """Read every file the includes under `nodes` name, in include order, each once."""
    if depth > _MAX_INCLUDE_DEPTH:
        return
    for node in nodes:
        if node.block:
            _load_includes(node.block, source, bodies, trees, depth)
        if node.name != "include" or len(node.args) != 1:
            continue
        for path in source.find(node.args[0]):
            if path in bodies:
                continue
            try:
                text = read_text(_read(path))
            except OSError as exc:
                trees.setdefault(path, FileTree()).errors.append(
                    ParseError(node.file, node.line, node.column, f"cannot read {path}: {exc}")
                )
                continue
            bodies[path] = text
            trees[path] = parse_file_text(text, path)
            _load_includes(trees[path].directives, source, bodies, trees, depth + 1)


def _match_paths(pattern: str, bodies: dict[str, str]) -> list[str]:
    """Dump paths an include pattern names, in glob(3) order (sorted, '*' not crossing '/')."""
    main = next(iter(bodies))
    full = pattern if posixpath.isabs(pattern) else posixpath.join(posixpath.dirname(main), pattern)
    full = posixpath.normpath(full)
    if not _is_glob(full):
        return [full] if full in bodies else []
    wanted = full.split("/")
    hidden_ok = wanted[-1].startswith(".")
    return sorted(
        path for path in bodies if _glob_match(path.split("/"), wanted, hidden_ok=hidden_ok)
    )


def _glob_match(parts: list[str], wanted: list[str], *, hidden_ok: bool) -> bool:
    """glob(3) on split paths: same depth, each part matched alone, dot files only by a dot."""
    if len(parts) != len(wanted) or (not hidden_ok and parts[-1].startswith(".")):
        return False
    # Imported here: only dumps with glob includes need it (~0.4 ms of every CLI run).
    from fnmatch import fnmatchcase

    return all(fnmatchcase(part, pattern) for part, pattern in zip(parts, wanted, strict=True))


class _Resolver:
    """Copies each file's tree into one tree, putting included files in place of includes."""

    def __init__(self, trees: dict[str, FileTree], source: _Source) -> None:
        self.trees = trees
        self.source = source
        self.errors: list[ParseError] = []
        self.unresolved: list[Unresolved] = []

    def copy(
        self,
        nodes: list[Directive],
        parent: Directive | None,
        via: Directive | None,
        chain: tuple[str, ...],
    ) -> list[Directive]:
        out: list[Directive] = []
        for node in nodes:
            clone = Directive(
                node.name,
                node.args,
                node.raw_args,
                node.file,
                node.line,
                node.column,
                node.start,
                node.end,
                None,
                parent,
                via,
                node.raw_block,
            )
            out.append(clone)
            if node.block is not None:
                clone.block = self.copy(node.block, clone, None, chain)
            elif node.name == "include" and len(node.args) == 1:
                out.extend(self.include(clone, parent, chain))
        return out

    def include(
        self, node: Directive, parent: Directive | None, chain: tuple[str, ...]
    ) -> list[Directive]:
        paths = self.source.find(node.args[0])
        if not paths:
            reason = self.source.missing(node.args[0])
            if reason is not None:
                self.unresolved.append(Unresolved(node, reason))
        out: list[Directive] = []
        for path in paths:
            tree = self.trees.get(path)
            if tree is None:
                continue
            if path in chain or len(chain) > _MAX_INCLUDE_DEPTH:
                self.errors.append(
                    ParseError(
                        node.file,
                        node.line,
                        node.column,
                        f'include "{node.args[0]}" includes {path} again (an include loop)',
                        STRUCTURE,
                    )
                )
                continue
            out.extend(self.copy(tree.directives, parent, node, (*chain, path)))
        return out


def _assemble(
    bodies: dict[str, str], trees: dict[str, FileTree], source: _Source, context: str
) -> ParsedConfig:
    errors: list[ParseError] = []
    for tree in trees.values():
        errors.extend(tree.errors)
    files = {
        path: ConfigFile(path, text, trees[path].comments, trees[path].directives)
        for path, text in bodies.items()
    }
    main = next(iter(bodies))
    resolver = _Resolver(trees, source)
    root, inner = wrap(context, main, len(bodies[main]))
    body = resolver.copy(trees[main].directives, inner, None, (main,))
    if inner is None:
        root = body
    else:
        inner.block = body
    errors.extend(resolver.errors)
    return ParsedConfig(
        files=files, root=root, errors=errors, context=context, unresolved=resolver.unresolved
    )
