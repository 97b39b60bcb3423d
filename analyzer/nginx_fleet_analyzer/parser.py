"""Parse the text of one nginx config file into directives and comments, never raising."""

from __future__ import annotations

from nginx_fleet_analyzer.directives import RAW_BLOCK_SUFFIX
from nginx_fleet_analyzer.lexer import LineIndex, Token, first_binary, raw_block_end, tokenize
from nginx_fleet_analyzer.model import Comment, Directive, ParseError
from nginx_fleet_analyzer.record import Record

# Rule ids parse errors are reported under: token-level problems make a directive's arguments
# wrong (V-args); unbalanced braces put directives in the wrong block (V-context).
SYNTAX = "V-args"
STRUCTURE = "V-context"


class FileTree(Record):
    """One file's own directives (includes not resolved), comments and syntax errors."""

    __slots__ = ("comments", "directives", "errors")

    directives: list[Directive]
    comments: list[Comment]
    errors: list[ParseError]

    def __init__(
        self,
        directives: list[Directive] | None = None,
        comments: list[Comment] | None = None,
        errors: list[ParseError] | None = None,
    ) -> None:
        self.directives = [] if directives is None else directives
        self.comments = [] if comments is None else comments
        self.errors = [] if errors is None else errors


class _Frame(Record):
    """An open block: its directive (None for the file level or a nameless block) and body."""

    __slots__ = ("body", "directive")

    directive: Directive | None
    body: list[Directive]

    def __init__(self, directive: Directive | None, body: list[Directive]) -> None:
        self.directive = directive
        self.body = body


class _FileParser:
    """State of parsing one file."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.lines = LineIndex(text)
        self.tree = FileTree()
        self.stack = [_Frame(None, self.tree.directives)]
        self.words: list[Token] = []

    def error(self, offset: int, message: str, rule: str = SYNTAX) -> None:
        line, column = self.lines.position(offset)
        self.tree.errors.append(ParseError(self.path, line, column, message, rule))

    def run(self) -> FileTree:
        binary = first_binary(self.text)
        if binary is not None:
            code = ord(self.text[binary])
            shown = "an undecodable byte" if code == 0xFFFD else f"control character 0x{code:02x}"
            self.error(binary, f"binary content: {shown} in the file")
        pos: int | None = 0
        while pos is not None:
            pos = self._scan(pos)
        self._finish()
        return self.tree

    def _scan(self, pos: int) -> int | None:
        """Consume tokens from `pos`; return where to resume after an opaque block, or None."""
        for token in tokenize(self.text, pos):
            kind = token.kind
            if kind == "word" or kind == "quoted":
                self.words.append(token)
            elif kind == ";":
                if self.words:
                    self._add(self._make(token.end, block=False))
                else:
                    self.error(token.start, 'unexpected ";"')
            elif kind == "{":
                resume = self._open(token)
                if resume is not None:
                    return resume
            elif kind == "}":
                self._close(token)
            elif kind == "comment":
                line, column = self.lines.position(token.start)
                self.tree.comments.append(
                    Comment(token.value, self.path, line, column, token.start, token.end)
                )
            else:
                self.error(token.start, token.value)
        return None

    def _make(self, end: int, *, block: bool) -> Directive:
        first = self.words[0]
        line, column = self.lines.position(first.start)
        node = Directive(
            name=first.value,
            args=[w.value for w in self.words[1:]],
            raw_args=[w.raw for w in self.words[1:]],
            file=self.path,
            line=line,
            column=column,
            start=first.start,
            end=end,
            block=[] if block else None,
            parent=self.stack[-1].directive,
        )
        self.words = []
        return node

    def _add(self, node: Directive) -> None:
        self.stack[-1].body.append(node)

    def _open(self, token: Token) -> int | None:
        if not self.words:
            self.error(token.start, 'unexpected "{" without a directive name', STRUCTURE)
            # Keep the braces balanced: its contents land in the enclosing block.
            self.stack.append(_Frame(None, self.stack[-1].body))
            return None
        node = self._make(token.end, block=True)
        self._add(node)
        if node.name.endswith(RAW_BLOCK_SUFFIX):
            close = raw_block_end(self.text, token.end)
            if close is None:
                self.error(node.start, f'"{node.name}" block is never closed', STRUCTURE)
                node.raw_block = self.text[token.end :]
                node.end = len(self.text)
                return len(self.text)
            node.raw_block = self.text[token.end : close]
            node.end = close + 1
            return close + 1
        self.stack.append(_Frame(node, node.block if node.block is not None else []))
        return None

    def _close(self, token: Token) -> None:
        if self.words:
            self.error(self.words[-1].end, 'unexpected "}": missing ";" before it')
            self._add(self._make(self.words[-1].end, block=False))
        if len(self.stack) == 1:
            self.error(token.start, 'unexpected "}": no block is open here', STRUCTURE)
            return
        frame = self.stack.pop()
        if frame.directive is not None:
            frame.directive.end = token.end

    def _finish(self) -> None:
        end = len(self.text)
        if self.words:
            self.error(self.words[-1].end, 'unexpected end of file, expecting ";" or "}"')
            self._add(self._make(self.words[-1].end, block=False))
        for frame in reversed(self.stack[1:]):
            opener = frame.directive
            if opener is not None:
                self.error(
                    opener.start,
                    f'"{opener.name}" block is never closed (unexpected end of file)',
                    STRUCTURE,
                )
                opener.end = end
            else:
                self.error(end, 'unexpected end of file, expecting "}"', STRUCTURE)
        del self.stack[1:]


def parse_file_text(text: str, path: str) -> FileTree:
    """Parse one file's text; syntax problems are returned as errors, never raised."""
    return _FileParser(text, path).run()
