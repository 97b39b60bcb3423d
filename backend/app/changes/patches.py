"""Patch arithmetic the control plane needs: apply ops to a text, reverse them, diff texts."""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any


def sha256_text(text: str) -> str:
    """SHA-256 of a file's text as the engine and the agent compute it (UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def apply_ops(text: str, ops: Sequence[Mapping[str, Any]]) -> str:
    """The text with each op's lines replaced (ops address lines of `text`, 1-based).

    A CRLF file stays CRLF: new lines get the carriage return its lines end with."""
    lines = text.split("\n")
    crlf = len(lines) > 1 and all(line.endswith("\r") for line in lines[:-1])
    for op in sorted(ops, key=lambda item: int(item["start"]), reverse=True):
        start = int(op["start"]) - 1
        new = [line + "\r" if crlf else line for line in op["new"]]
        lines[start : start + int(op["count"])] = new
    return "\n".join(lines)


def reverse_files(files: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The patch that undoes `files`, with base and new hashes swapped.

    Each op's start moves by what the ops before it added or removed, so the reverse ops
    address lines of the patched text."""
    reversed_files = []
    for patch in files:
        shift = 0
        ops = []
        for op in sorted(patch["ops"], key=lambda item: int(item["start"])):
            ops.append(
                {
                    "start": int(op["start"]) + shift,
                    "count": len(op["new"]),
                    "old": list(op["new"]),
                    "new": list(op["old"]),
                }
            )
            shift += len(op["new"]) - int(op["count"])
        reversed_files.append(
            {
                "path": patch["path"],
                "base_sha256": patch["new_sha256"],
                "new_sha256": patch["base_sha256"],
                "ops": ops,
            }
        )
    return reversed_files


def unified_diff(path: str, before: str, after: str) -> str:
    """One file's unified diff (`--- a/PATH`, `+++ b/PATH`), three lines of context."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a{path}" if path.startswith("/") else f"a/{path}",
            tofile=f"b{path}" if path.startswith("/") else f"b/{path}",
        )
    )
