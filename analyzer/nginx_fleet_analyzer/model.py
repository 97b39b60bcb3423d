"""The parsed nginx configuration: directives, comments, files and the whole dump."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.record import Record


class Directive:
    """One directive (or map/types entry) with its position in the original text.

    `start`/`end` index the file's `ConfigFile.text` (str offsets, so `text[start:end]` is the
    directive from the first character of its name to just after its ';' or closing '}');
    `ConfigFile.byte_span` gives the same span in UTF-8 bytes of the file.
    """

    __slots__ = (
        "_by_name",
        "_descendants",
        "args",
        "block",
        "column",
        "end",
        "file",
        "line",
        "name",
        "parent",
        "raw_args",
        "raw_block",
        "start",
        "via",
    )

    name: str
    args: list[str]
    raw_args: list[str]
    file: str
    line: int
    column: int
    start: int
    end: int
    block: list[Directive] | None
    parent: Directive | None
    # The include directive that pulled this top-level directive of an included file in.
    via: Directive | None
    # Verbatim body of an opaque block such as `content_by_lua_block { ... }`.
    raw_block: str | None
    # Children by name, built on first lookup: the tree is not changed after parsing.
    _by_name: dict[str, list[Directive]] | None
    _descendants: list[Directive] | None

    def __init__(
        self,
        name: str,
        args: list[str],
        raw_args: list[str],
        file: str,
        line: int,
        column: int,
        start: int,
        end: int,
        block: list[Directive] | None = None,
        parent: Directive | None = None,
        via: Directive | None = None,
        raw_block: str | None = None,
    ) -> None:
        self.name = name
        self.args = args
        self.raw_args = raw_args
        self.file = file
        self.line = line
        self.column = column
        self.start = start
        self.end = end
        self.block = block
        self.parent = parent
        self.via = via
        self.raw_block = raw_block
        self._by_name = None
        self._descendants = None

    @property
    def context(self) -> str:
        """Name of the block this directive sits in ('main' at the top level)."""
        return self.parent.name if self.parent is not None else "main"

    @property
    def module_scope(self) -> str:
        """The top-level block this directive is under: 'main', 'events', 'http', 'stream', ..."""
        node: Directive = self
        while node.parent is not None:
            node = node.parent
        return "main" if node is self else node.name

    @property
    def label(self) -> str:
        """Short human name of this directive as a place, e.g. 'location /static/' or 'server'."""
        if self.name in ("location", "if", "limit_except", "upstream", "map", "geo"):
            return f"{self.name} {' '.join(self.raw_args)}".strip()
        if self.name == "server" and self.block is not None:
            names = self.child("server_name")
            if names is not None and names.args:
                return f"server {names.args[0]}"
        return self.name

    def children(self, name: str) -> list[Directive]:
        """Direct children with this name (includes already resolved), in document order."""
        if self.block is None:
            return []
        if self._by_name is None:
            self._by_name = _group_by_name(self.block)
        return self._by_name.get(name, [])

    def child(self, name: str) -> Directive | None:
        """The last direct child with this name (nginx keeps the later one), or None."""
        found = self.children(name)
        return found[-1] if found else None

    def ancestors(self) -> Iterator[Directive]:
        """Enclosing blocks, innermost first."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def walk(self) -> Iterator[Directive]:
        """This directive's descendants, depth first in document order (not itself)."""
        if self._descendants is None:
            order: list[Directive] = []
            stack = list(reversed(self.block or []))
            while stack:
                node = stack.pop()
                order.append(node)
                if node.block:
                    stack.extend(reversed(node.block))
            self._descendants = order
        return iter(self._descendants)

    def __repr__(self) -> str:
        return f"Directive({self.name!r}, {self.args!r}, {self.file}:{self.line})"


def _group_by_name(nodes: list[Directive]) -> dict[str, list[Directive]]:
    grouped: dict[str, list[Directive]] = {}
    for node in nodes:
        grouped.setdefault(node.name, []).append(node)
    return grouped


class Comment(Record):
    """A `#` comment, text without the leading '#'."""

    __slots__ = ("column", "end", "file", "line", "start", "text")

    text: str
    file: str
    line: int
    column: int
    start: int
    end: int

    def __init__(self, text: str, file: str, line: int, column: int, start: int, end: int) -> None:
        self.text = text
        self.file = file
        self.line = line
        self.column = column
        self.start = start
        self.end = end


class ConfigFile(Record):
    """One file of the configuration with its verbatim text."""

    __slots__ = ("comments", "directives", "path", "text")

    path: str
    text: str
    comments: list[Comment]
    # The file's own top-level directives before include resolution.
    directives: list[Directive]

    def __init__(
        self,
        path: str,
        text: str,
        comments: list[Comment] | None = None,
        directives: list[Directive] | None = None,
    ) -> None:
        self.path = path
        self.text = text
        self.comments = [] if comments is None else comments
        self.directives = [] if directives is None else directives

    def byte_span(self, start: int, end: int) -> tuple[int, int]:
        """The UTF-8 byte offsets of the str span text[start:end], for edits of the raw file."""
        head = len(self.text[:start].encode())
        return head, head + len(self.text[start:end].encode())


class ParseError(Record):
    """A syntax problem found while reading the text (reported as a V-* finding)."""

    __slots__ = ("column", "file", "line", "message", "rule")

    file: str
    line: int
    column: int
    message: str
    # Which validity rule reports it: 'V-args' for syntax, 'V-context' for block structure.
    rule: str

    def __init__(
        self, file: str, line: int, column: int, message: str, rule: str = "V-args"
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.rule = rule


class ParsedConfig:
    """A whole configuration: every file, the resolved tree and the problems met."""

    # __weakref__: callers may cache derived tables per config in a WeakKeyDictionary.
    __slots__ = (
        "__weakref__",
        "_by_name",
        "_order",
        "_root_by_name",
        "context",
        "derived",
        "errors",
        "files",
        "from_dump",
        "root",
        "unresolved",
    )

    files: dict[str, ConfigFile]
    root: list[Directive]
    errors: list[ParseError]
    # Derived on first use (document order, by name, root by name); the tree is not changed
    # after parsing.
    _order: list[Directive] | None
    _by_name: dict[str, list[Directive]] | None
    _root_by_name: dict[str, list[Directive]] | None
    # The context the main file was read in: 'main' for a whole config, else the block nginx
    # would include it in ('http' for a site file, 'server' for a location snippet...).
    context: str
    # Includes whose files were not read (absent from the dump, or not found next to one file).
    unresolved: list[Unresolved]
    # Whether the text was an `nginx -T` dump (every file nginx read is in it).
    from_dump: bool
    # Tables rules derive from the tree, by name, computed once per config and shared by the
    # rules of an analysis (a dict on the config, not a WeakKeyDictionary: importing weakref
    # costs every CLI run ~1.5 ms).
    derived: dict[str, object]

    def __init__(
        self,
        files: dict[str, ConfigFile],
        root: list[Directive],
        errors: list[ParseError] | None = None,
        context: str = "main",
        unresolved: list[Unresolved] | None = None,
        from_dump: bool = False,
    ) -> None:
        self.files = files
        self.root = root
        self.errors = [] if errors is None else errors
        self._order = None
        self._by_name = None
        self._root_by_name = None
        self.context = context
        self.unresolved = [] if unresolved is None else unresolved
        self.from_dump = from_dump
        self.derived = {}

    @property
    def partial(self) -> bool:
        """Whether this is one file read alone in its context (its nginx.conf is not seen)."""
        return self.context != "main"

    @property
    def main_file(self) -> str | None:
        """Path of the first (main) file."""
        return next(iter(self.files), None)

    def walk(self) -> Iterator[Directive]:
        """Every directive of the resolved tree, depth first in document order."""
        if self._order is None:
            order: list[Directive] = []
            stack = list(reversed(self.root))
            while stack:
                node = stack.pop()
                order.append(node)
                if node.block:
                    stack.extend(reversed(node.block))
            self._order = order
        return iter(self._order)

    def find(self, name: str) -> list[Directive]:
        """Every directive with this name anywhere in the tree, in document order."""
        if self._by_name is None:
            self._by_name = _group_by_name(list(self.walk()))
        return list(self._by_name.get(name, []))

    def top(self, name: str) -> list[Directive]:
        """Directives with this name at the main (top) level."""
        if self._root_by_name is None:
            self._root_by_name = _group_by_name(self.root)
        return list(self._root_by_name.get(name, []))

    def effective(self, name: str, at: Directive | None) -> Directive | None:
        """The definition of `name` that applies at `at` by nginx's inheritance, or None.

        Looks in `at`'s own block (when `at` is a block), then in each enclosing block up to main.
        """
        if at is not None:
            if at.block is not None and (own := at.children(name)):
                return own[-1]
            for block in at.ancestors():
                if found := block.children(name):
                    return found[-1]
        at_main = self.top(name)
        return at_main[-1] if at_main else None

    def http(self) -> Directive | None:
        """The `http` block, if any."""
        blocks = [d for d in self.root if d.name == "http" and d.block is not None]
        return blocks[0] if blocks else None

    def servers(self) -> list[Directive]:
        """Every `server` block of the http context."""
        return [
            d
            for http in self.root
            if http.name == "http" and http.block is not None
            for d in http.block
            if d.name == "server" and d.block is not None
        ]

    def locations(self, server: Directive) -> list[Directive]:
        """Every `location` block of a server, nested ones included, in document order."""
        return [d for d in server.walk() if d.name == "location" and d.block is not None]

    def upstreams(self) -> list[Directive]:
        """Every `upstream` block of the http context."""
        http = self.http()
        return http.children("upstream") if http is not None else []

    def text_of(self, node: Directive) -> str:
        """The verbatim source text of a directive (its byte span in its file)."""
        source = self.files.get(node.file)
        return source.text[node.start : node.end] if source is not None else ""


class Unresolved(Record):
    """An include whose files were not read, so what they hold is not analysed."""

    __slots__ = ("include", "reason")

    include: Directive
    # Why, for people: 'not in the dump', 'no such file', 'only this file was given'.
    reason: str

    def __init__(self, include: Directive, reason: str) -> None:
        self.include = include
        self.reason = reason
