"""File texts of an `nginx -T` dump and the line ops of docs/changes.md, on text and on bytes.

A file's text is its dump section without the one newline nginx prints after every file, so
it is the file byte for byte. Lines are the pieces between "\\n" (the control plane's model:
"a\\nb\\n" is "a", "b", ""); an op replaces `count` of them from 1-based `start`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

REDACTION_MARKER = "[redacted]"
_HEADER = re.compile(rb"^# configuration file (.+):$", re.MULTILINE)


@dataclass(frozen=True)
class Op:
    """Replace `count` lines from line `start` (1-based) with `new`; `old` is what they are."""

    start: int
    count: int
    old: tuple[str, ...]
    new: tuple[str, ...]


class PatchError(Exception):
    """The ops do not fit the file (out of range, overlapping, `old` differs)."""


def sha256_text(text: str) -> str:
    """SHA-256 of a file's text as engine, control plane and agent compute it (UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def decode_dump(raw: bytes) -> str:
    """The dump as the collector reads it: UTF-8, newlines translated like Python text mode."""
    return raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def split_text(dump: str) -> dict[str, str]:
    """Path → text of every file of a (decoded) dump; a path dumped twice keeps its first text."""
    return {
        path.decode("utf-8", errors="replace"): body.decode("utf-8", errors="replace")
        for path, body in split_bytes(dump.encode("utf-8")).items()
    }


def split_bytes(raw: bytes) -> dict[bytes, bytes]:
    """Path → exact bytes of every file of a raw dump (nginx prints files verbatim)."""
    headers = list(_HEADER.finditer(raw))
    files: dict[bytes, bytes] = {}
    for index, header in enumerate(headers):
        body_start = header.end() + 1
        body_end = headers[index + 1].start() if index + 1 < len(headers) else len(raw)
        body = raw[body_start:body_end] if body_start <= body_end else b""
        if body.endswith(b"\n"):
            body = body[:-1]
        files.setdefault(header.group(1), body)
    return files


def check_ops(lines: Sequence[str], ops: Sequence[Op]) -> None:
    """Raise PatchError unless the ops are in order, in range and their `old` lines match."""
    previous_end = 1
    for op in ops:
        if op.start < previous_end:
            raise PatchError(f"ops overlap or are out of order at line {op.start}")
        if op.start < 1 or op.start - 1 + op.count > len(lines) or op.start > len(lines) + 1:
            raise PatchError(f"op at line {op.start} (+{op.count}) is outside the file")
        if len(op.old) != op.count:
            raise PatchError(
                f"op at line {op.start}: `old` has {len(op.old)} lines, not {op.count}"
            )
        current = tuple(lines[op.start - 1 : op.start - 1 + op.count])
        if current != op.old:
            raise PatchError(f"line {op.start} is not what the change was made against")
        previous_end = op.start + op.count


def patch_text(text: str, ops: Sequence[Op]) -> str:
    """The text with the ops applied (no line ending handling: the redacted text is LF only)."""
    lines = text.split("\n")
    for op in reversed(ops):
        lines[op.start - 1 : op.start - 1 + op.count] = list(op.new)
    return "\n".join(lines)


def patch_bytes(data: bytes, ops: Sequence[Op]) -> bytes:
    """The real file's bytes with the ops applied, its line endings and final newline kept.

    Untouched lines are copied byte for byte (a secret the dump redacted stays as it is); a
    new line ends like most lines of the file (CRLF or LF)."""
    pieces = data.split(b"\n")
    # Each piece but the last was followed by "\n"; a "\r" before it makes that line CRLF.
    contents = [
        p[:-1] if p.endswith(b"\r") and i < len(pieces) - 1 else p for i, p in enumerate(pieces)
    ]
    endings: list[bytes | None] = [
        (b"\r\n" if pieces[i].endswith(b"\r") else b"\n") if i < len(pieces) - 1 else None
        for i in range(len(pieces))
    ]
    crlf = sum(ending == b"\r\n" for ending in endings)
    dominant = b"\r\n" if crlf * 2 > len(pieces) - 1 else b"\n"
    lines = list(zip(contents, endings, strict=True))
    for op in reversed(ops):
        new = [(line.encode("utf-8"), None) for line in op.new]
        lines[op.start - 1 : op.start - 1 + op.count] = new
    out = bytearray()
    for index, (content, ending) in enumerate(lines):
        out += content
        if index < len(lines) - 1:
            # A line that was last (no final newline) and now has lines after it needs an end.
            out += ending or dominant
    return bytes(out)


def normalized_lines(data: bytes) -> list[str]:
    """The real file's lines as the dump shows them (decoded, "\\r" of CRLF endings dropped)."""
    return decode_dump(data).split("\n")
