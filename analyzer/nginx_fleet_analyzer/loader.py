"""Build a ParsedConfig from an `nginx -T` dump, a config text or a file on disk."""

from __future__ import annotations

import glob
import posixpath
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from nginx_fleet_analyzer.dump import is_dump, split_dump
from nginx_fleet_analyzer.model import ConfigFile, Directive, ParsedConfig, ParseError
from nginx_fleet_analyzer.parser import STRUCTURE, SYNTAX, FileTree, parse_file_text

_GLOB_CHARS = frozenset("*?[")
# Deeper include nesting than this is a loop nginx would also fail on.
_MAX_INCLUDE_DEPTH = 32

Finder = Callable[[str], list[str]]


def parse_dump(text: str) -> ParsedConfig:
    """Parse `nginx -T` output; includes are resolved from its sections."""
    sections = split_dump(text)
    if not sections:
        return parse_text(text, "nginx.conf")
    trees = {path: parse_file_text(body, path) for path, body in sections}
    bodies = dict(sections)

    def find(pattern: str) -> list[str]:
        return _match_paths(pattern, bodies)

    return _assemble(bodies, trees, find, report_missing=True)


def parse_text(text: str, path: str = "nginx.conf") -> ParsedConfig:
    """Parse a single file's text; its includes stay unresolved (no other file is known)."""
    trees = {path: parse_file_text(text, path)}
    return _assemble({path: text}, trees, lambda _pattern: [], report_missing=False)


def parse_auto(text: str, path: str = "nginx.conf") -> ParsedConfig:
    """Parse `text` as a dump when it has dump headers, else as one file named `path`."""
    return parse_dump(text) if is_dump(text) else parse_text(text, path)


def parse_path(path: str | Path) -> ParsedConfig:
    """Parse a dump file, or a config file on disk together with the files it includes."""
    main = Path(path)
    text = read_text(main.read_bytes())
    if is_dump(text):
        return parse_dump(text)
    main_name = str(main)
    bodies: dict[str, str] = {main_name: text}
    trees: dict[str, FileTree] = {main_name: parse_file_text(text, main_name)}
    base = posixpath.dirname(main_name)

    def find(pattern: str) -> list[str]:
        full = pattern if posixpath.isabs(pattern) else posixpath.join(base, pattern)
        if not _GLOB_CHARS.intersection(full):
            return [full] if full in bodies or Path(full).is_file() else []
        return sorted(p for p in glob.glob(full) if Path(p).is_file())

    _load_includes(trees[main_name].directives, find, bodies, trees, depth=0)
    return _assemble(bodies, trees, find, report_missing=True)


def read_text(data: bytes) -> str:
    """Decode config bytes as UTF-8; undecodable bytes become U+FFFD (reported as binary)."""
    return data.decode("utf-8", errors="replace")


def _load_includes(
    nodes: list[Directive],
    find: Finder,
    bodies: dict[str, str],
    trees: dict[str, FileTree],
    depth: int,
) -> None:
    """Read every file the includes under `nodes` name, in include order, each once."""
    if depth > _MAX_INCLUDE_DEPTH:
        return
    for node in nodes:
        if node.block:
            _load_includes(node.block, find, bodies, trees, depth)
        if node.name != "include" or len(node.args) != 1:
            continue
        for path in find(node.args[0]):
            if path in bodies:
                continue
            try:
                text = read_text(Path(path).read_bytes())
            except OSError as exc:
                trees.setdefault(path, FileTree()).errors.append(
                    ParseError(node.file, node.line, node.column, f"cannot read {path}: {exc}")
                )
                continue
            bodies[path] = text
            trees[path] = parse_file_text(text, path)
            _load_includes(trees[path].directives, find, bodies, trees, depth + 1)


def _match_paths(pattern: str, bodies: dict[str, str]) -> list[str]:
    """Dump paths an include pattern names, in glob(3) order (sorted, '*' not crossing '/')."""
    main = next(iter(bodies))
    full = pattern if posixpath.isabs(pattern) else posixpath.join(posixpath.dirname(main), pattern)
    full = posixpath.normpath(full)
    if not _GLOB_CHARS.intersection(full):
        return [full] if full in bodies else []
    wanted = PurePosixPath(full)
    hidden_ok = PurePosixPath(full).name.startswith(".")
    return sorted(
        path
        for path in bodies
        if path.startswith("/") == full.startswith("/")
        and len(PurePosixPath(path).parts) == len(wanted.parts)
        and (hidden_ok or not PurePosixPath(path).name.startswith("."))
        and PurePosixPath(path).match(full)
    )


class _Resolver:
    """Copies each file's tree into one tree, putting included files in place of includes."""

    def __init__(
        self, trees: dict[str, FileTree], find: Finder, errors: list[ParseError], report: bool
    ) -> None:
        self.trees = trees
        self.find = find
        self.errors = errors
        self.report_missing = report

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
        paths = self.find(node.args[0])
        if not paths and self.report_missing and not _GLOB_CHARS.intersection(node.args[0]):
            self.errors.append(
                ParseError(
                    node.file,
                    node.line,
                    node.column,
                    f'include "{node.args[0]}": no such file in the configuration',
                    SYNTAX,
                )
            )
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
    bodies: dict[str, str], trees: dict[str, FileTree], find: Finder, *, report_missing: bool
) -> ParsedConfig:
    errors: list[ParseError] = []
    for tree in trees.values():
        errors.extend(tree.errors)
    files = {
        path: ConfigFile(path, text, trees[path].comments, trees[path].directives)
        for path, text in bodies.items()
    }
    main = next(iter(bodies))
    resolver = _Resolver(trees, find, errors, report_missing)
    root = resolver.copy(trees[main].directives, None, None, (main,))
    return ParsedConfig(files=files, root=root, errors=errors)
