"""Split one nginx config file into tokens the way nginx's ngx_conf_read_token does."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Generator, Iterator

from nginx_fleet_analyzer.record import Record

TYPE_CHECKING = False  # not typing's: see cli.py
if TYPE_CHECKING:
    from typing import Literal

    TokenKind = Literal["word", "quoted", ";", "{", "}", "comment", "error"]

# A word runs until whitespace, ';' or '{' (a '}' inside a word is literal, as in nginx);
# '${' continues a word (a variable, not a block) and a backslash escapes the next character.
# nginx's whitespace is exactly space, tab, CR and LF.
_WORD = re.compile(r"(?:\\[\s\S]|\$\{|[^ \t\r\n;{\\])+|\\\Z")
_SPACE = re.compile(r"[ \t\r\n]+")
_COMMENT = re.compile(r"#[^\n]*")
_QUOTED = {
    '"': re.compile(r'"((?:[^"\\]|\\[\s\S])*)"'),
    "'": re.compile(r"'((?:[^'\\]|\\[\s\S])*)'"),
}
# A regex quantifier such as `{2,3}` right after a word: nginx would read its '{' as a block.
_QUANTIFIER = re.compile(r"\{\d*,?\d*\}")
_ESCAPES = re.compile(r"\\([\s\S])")
_ESCAPED = {'"': '"', "'": "'", "\\": "\\", "t": "\t", "r": "\r", "n": "\n"}
# Control characters; U+FFFD (an undecodable byte) is looked for with str.find: in the class it
# makes re build a Unicode charset, ~0.5 ms of every CLI run.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def unescape(text: str) -> str:
    """Resolve backslash escapes as nginx does; unknown escapes stay as written."""
    if "\\" not in text:
        return text
    return _ESCAPES.sub(lambda m: _ESCAPED.get(m[1], m[0]), text)


class Token(Record):
    """One token: its kind, value (unquoted, unescaped), the text as written and its span."""

    __slots__ = ("end", "kind", "raw", "start", "value")

    kind: TokenKind
    value: str
    raw: str
    start: int
    end: int

    def __init__(self, kind: TokenKind, value: str, raw: str, start: int, end: int) -> None:
        self.kind = kind
        self.value = value
        self.raw = raw
        self.start = start
        self.end = end


class LineIndex:
    """Turns string offsets into 1-based line and column numbers."""

    __slots__ = ("_starts",)

    def __init__(self, text: str) -> None:
        self._starts = [0]
        self._starts.extend(m.end() for m in re.finditer("\n", text))

    def line(self, offset: int) -> int:
        """1-based line of an offset."""
        return bisect_right(self._starts, offset)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset."""
        line = bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1


def first_binary(text: str) -> int | None:
    """Offset of the first control/undecodable character that has no place in a config."""
    match = _CONTROL.search(text)
    replaced = text.find("\ufffd", 0, match.start() if match else len(text))
    if replaced >= 0:
        return replaced
    return match.start() if match else None


def tokenize(text: str, pos: int = 0) -> Iterator[Token]:
    """Yield the tokens of `text`; problems come out as 'error' tokens, never as exceptions.

    Regex quantifier braces glued to a word (`^/x{2,3}$`) stay inside the word, so the tree is
    what the author meant, and an 'error' token says nginx itself needs that regex quoted.
    """
    size = len(text)
    need_space = False
    while pos < size:
        ch = text[pos]
        if ch in " \t\r\n":
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            need_space = False
            continue
        if need_space and ch not in ";{)":
            yield Token("error", f'unexpected "{ch}" after a quoted string', ch, pos, pos + 1)
        need_space = False
        if ch in ";{}":
            yield Token(ch, ch, ch, pos, pos + 1)  # type: ignore[arg-type]
            pos += 1
            continue
        if ch == "#":
            end = _COMMENT.match(text, pos).end()  # type: ignore[union-attr]
            yield Token("comment", text[pos + 1 : end], text[pos:end], pos, end)
            pos = end
            continue
        if ch in _QUOTED:
            match = _QUOTED[ch].match(text, pos)
            if match is None:
                yield Token("error", f"unterminated {ch} quoted string", ch, pos, size)
                return
            yield Token("quoted", unescape(match[1]), match[0], pos, match.end())
            pos = match.end()
            need_space = True
            continue
        pos = yield from _word(text, pos)


def _word(text: str, pos: int) -> Generator[Token, None, int]:
    """Yield one word starting at `pos` (with any regex quantifier braces) and return its end."""
    end = _WORD.match(text, pos).end()  # type: ignore[union-attr]
    quantified = False
    while end < len(text) and text[end] == "{":
        quantifier = _QUANTIFIER.match(text, end)
        if quantifier is None:
            break
        after = quantifier.end()
        more = _WORD.match(text, after)
        # `x{2,3}$ {` or `x{2}/` is a regex; a lone `{}` followed by space is an empty block.
        if quantifier.end() - end == 2 and more is None:
            break
        quantified = True
        end = more.end() if more is not None else after
    raw = text[pos:end]
    if quantified:
        yield Token(
            "error",
            "a regular expression containing '{' must be quoted, or nginx reads it as a block",
            raw,
            pos,
            end,
        )
    yield Token("word", unescape(raw), raw, pos, end)
    return end


def raw_block_end(text: str, pos: int) -> int | None:
    """Offset of the '}' closing an opaque (Lua) block whose body starts at `pos`, or None.

    Braces inside Lua strings, long brackets and comments do not count.
    """
    depth = 1
    size = len(text)
    while pos < size:
        ch = text[pos]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return pos
        elif ch in "\"'":
            pos = _lua_string_end(text, pos, ch)
        elif ch == "[" and (long := _LUA_LONG_OPEN.match(text, pos)) is not None:
            close = text.find("]" + long[1] + "]", long.end())
            pos = size if close < 0 else close + len(long[1]) + 1
        elif text.startswith("--", pos):
            long = _LUA_LONG_OPEN.match(text, pos + 2)
            if long is not None:
                close = text.find("]" + long[1] + "]", long.end())
                pos = size if close < 0 else close + len(long[1]) + 1
            else:
                newline = text.find("\n", pos)
                pos = size if newline < 0 else newline
        pos += 1
    return None


_LUA_LONG_OPEN = re.compile(r"\[(=*)\[")


def _lua_string_end(text: str, pos: int, quote: str) -> int:
    """Offset of the quote closing a Lua short string opened at `pos` (end of line if none)."""
    pos += 1
    while pos < len(text):
        ch = text[pos]
        if ch == "\\":
            pos += 2
            continue
        if ch == quote or ch == "\n":
            return pos
        pos += 1
    return len(text)
