"""A tolerant reader of nginx configuration text and of `nginx -T` dumps.

It keeps the offsets of every token so that callers can rewrite values in place. It never
raises on odd input (unbalanced braces): the result is then merely less complete. The body of
a `*_by_lua_block` is Lua, skipped as one opaque block.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass, field

_SECTION_HEADER = re.compile(r"^# configuration file (?P<path>.+):$", re.MULTILINE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
# nginx itself refuses deeper include chains long before this; it guards against cycles.
_MAX_INCLUDE_DEPTH = 16


@dataclass(frozen=True)
class Token:
    """One word or quoted string; `start`/`end` span its raw text including quotes."""

    text: str
    start: int
    end: int


@dataclass
class Directive:
    """A directive with its arguments and, for block directives, its children."""

    name: str
    args: list[Token]
    block: list[Directive] | None = None
    name_token: Token = field(default_factory=lambda: Token("", 0, 0))


@dataclass(frozen=True)
class DumpSection:
    """One file of an `nginx -T` dump: its path and verbatim content."""

    path: str
    start: int
    end: int
    text: str


def split_dump(dump: str) -> list[DumpSection]:
    """Split `nginx -T` output into its per-file sections, in the order nginx printed them."""
    headers = list(_SECTION_HEADER.finditer(dump))
    sections = []
    for index, header in enumerate(headers):
        start = header.end() + 1 if header.end() < len(dump) else header.end()
        end = headers[index + 1].start() if index + 1 < len(headers) else len(dump)
        sections.append(DumpSection(header.group("path"), start, end, dump[start:end]))
    return sections


def parse(text: str) -> list[Directive]:
    """Parse configuration text into a tree of directives."""
    root: list[Directive] = []
    stack: list[list[Directive]] = [root]
    words: list[Token] = []

    def emit(block: list[Directive] | None) -> None:
        if words:
            stack[-1].append(Directive(words[0].text, list(words[1:]), block, words[0]))
        words.clear()

    for kind, token in _lex(text):
        if kind == "word":
            words.append(token)
        elif kind == ";":
            emit(None)
        elif kind == "{":
            children: list[Directive] = []
            if words:
                emit(children)
            stack.append(children)
        elif kind == "}":
            emit(None)
            if len(stack) > 1:
                stack.pop()
    emit(None)
    return root


def walk(directives: list[Directive]) -> list[Directive]:
    """All directives of a tree, depth first, in text order."""
    found: list[Directive] = []
    for directive in directives:
        found.append(directive)
        if directive.block is not None:
            found.extend(walk(directive.block))
    return found


def comments(text: str) -> list[Token]:
    """Every comment of the text: `text` is what follows the `#`, `start`/`end` span the `#`
    through the end of its line (newline excluded)."""
    return [token for kind, token in _lex(text, keep_comments=True) if kind == "#"]


def _lex(text: str, *, keep_comments: bool = False) -> list[tuple[str, Token]]:
    """Split text into words and the punctuation `;`, `{`, `}`; comments are skipped unless
    asked for."""
    out: list[tuple[str, Token]] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            i += 1
        elif char == "#":
            newline = text.find("\n", i)
            end = n if newline < 0 else newline
            if keep_comments:
                out.append(("#", Token(text[i + 1 : end], i, end)))
            i = end + 1
        elif char == "{" and out and out[-1][1].text.endswith("_by_lua_block"):
            # Lua, not nginx syntax: its `#` is an operator and its braces are tables. The
            # block is kept as one empty block; its text is left to the shape-based rules.
            close = _lua_block_end(text, i + 1)
            out.append(("{", Token("{", i, i + 1)))
            out.append(("}", Token("}", close, min(close + 1, n))))
            i = close + 1
        elif char in ";{}":
            out.append((char, Token(char, i, i + 1)))
            i += 1
        elif char in "\"'":
            token, i = _quoted(text, i)
            out.append(("word", token))
        else:
            token, i = _bare_word(text, i)
            out.append(("word", token))
    return out


_LUA_LONG_BRACKET = re.compile(r"\[(=*)\[")


def _lua_block_end(text: str, start: int) -> int:
    """The offset of the `}` closing a Lua block whose body starts at start (or the end of
    the text): braces counted outside Lua strings and comments."""
    depth, i, n = 1, start, len(text)
    while i < n:
        char = text[i]
        long_bracket = _LUA_LONG_BRACKET.match(text, i)
        if long_bracket:  # [[ … ]] or [==[ … ]==]: a long string
            closing = "]" + long_bracket.group(1) + "]"
            end = text.find(closing, long_bracket.end())
            i = n if end < 0 else end + len(closing)
        elif text.startswith("--", i):  # a comment, short or long
            long_comment = _LUA_LONG_BRACKET.match(text, i + 2)
            if long_comment:
                closing = "]" + long_comment.group(1) + "]"
                end = text.find(closing, long_comment.end())
                i = n if end < 0 else end + len(closing)
            else:
                newline = text.find("\n", i)
                i = n if newline < 0 else newline + 1
        elif char in "\"'":
            i = _quoted(text, i)[1]
        elif char == "{":
            depth += 1
            i += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
            i += 1
        else:
            i += 1
    return n


def _quoted(text: str, start: int) -> tuple[Token, int]:
    quote = text[start]
    value: list[str] = []
    i = start + 1
    while i < len(text) and text[i] != quote:
        if text[i] == "\\" and i + 1 < len(text):
            value.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
        else:
            value.append(text[i])
            i += 1
    end = min(i + 1, len(text))
    return Token("".join(value), start, end), end


def _bare_word(text: str, start: int) -> tuple[Token, int]:
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            i += 2
            continue
        if char == "{" and i > start and text[i - 1] == "$":
            # `${name}` is a variable inside the word, not a block opening.
            close = text.find("}", i)
            i = len(text) if close < 0 else close + 1
            continue
        if char.isspace() or char in ";{}":
            break
        i += 1
    return Token(text[start:i], start, i), i


def inline_includes(sections: list[DumpSection]) -> list[Directive]:
    """The main file's tree with every `include` replaced by the dumped files it matches.

    Relative include paths are resolved against the main file's directory (nginx's conf
    prefix); globs are matched against the paths nginx printed, in sorted order as nginx does.
    """
    if not sections:
        return []
    parsed: dict[str, list[Directive]] = {}
    for section in sections:
        parsed.setdefault(section.path, parse(section.text))
    conf_prefix = posixpath.dirname(sections[0].path)

    def expand(directives: list[Directive], depth: int) -> list[Directive]:
        out: list[Directive] = []
        for directive in directives:
            if directive.name == "include" and directive.args:
                if depth >= _MAX_INCLUDE_DEPTH:
                    continue
                pattern = posixpath.join(conf_prefix, directive.args[0].text)
                for path in sorted(p for p in parsed if fnmatch.fnmatchcase(p, pattern)):
                    out.extend(expand(parsed[path], depth + 1))
            elif directive.block is not None:
                block = expand(directive.block, depth)
                out.append(Directive(directive.name, directive.args, block, directive.name_token))
            else:
                out.append(directive)
        return out

    return expand(parsed[sections[0].path], 0)
