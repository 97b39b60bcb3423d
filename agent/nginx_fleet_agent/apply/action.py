"""The `apply` action of a push reply, read strictly: anything malformed is refused as invalid."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nginx_fleet_agent.apply.textpatch import REDACTION_MARKER, Op

_SHA256 = re.compile(r"[0-9a-f]{64}")


class InvalidAction(Exception):
    """The action cannot be applied as sent; the message says why."""


@dataclass(frozen=True)
class FilePatch:
    """The ops of one file and the hashes of its (redacted) text before and after."""

    path: str
    base_sha256: str
    new_sha256: str
    ops: tuple[Op, ...]


@dataclass(frozen=True)
class ApplyAction:
    """One change to apply: every file patch of it, all or nothing."""

    action_id: int
    files: tuple[FilePatch, ...]


def action_id_of(raw: object) -> int | None:
    """The action's id, or None when there is none to report against."""
    if not isinstance(raw, dict):
        return None
    value = raw.get("action_id")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value


def parse_action(raw: dict[str, Any]) -> ApplyAction:
    """Check the action's shape; raise InvalidAction with the reason."""
    action_id = action_id_of(raw)
    if action_id is None:
        raise InvalidAction("action_id is missing or not a positive integer")
    if raw.get("type") != "apply":
        raise InvalidAction(f"unknown action type {raw.get('type')!r}")
    files = raw.get("files")
    if not isinstance(files, list) or not files:
        raise InvalidAction("files must be a non-empty list")
    patches = tuple(_file_patch(index, item) for index, item in enumerate(files))
    if len({patch.path for patch in patches}) != len(patches):
        raise InvalidAction("a file is named twice")
    return ApplyAction(action_id, patches)


def _file_patch(index: int, item: object) -> FilePatch:
    where = f"files[{index}]"
    if not isinstance(item, dict):
        raise InvalidAction(f"{where} is not an object")
    path = item.get("path")
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        raise InvalidAction(f"{where}.path must be an absolute path")
    hashes = [item.get("base_sha256"), item.get("new_sha256")]
    if not all(isinstance(h, str) and _SHA256.fullmatch(h) for h in hashes):
        raise InvalidAction(f"{where}: base_sha256 and new_sha256 must be SHA-256 hex digests")
    raw_ops = item.get("ops")
    if not isinstance(raw_ops, list):
        raise InvalidAction(f"{where}.ops must be a list")
    ops = tuple(_op(f"{where}.ops[{n}]", op) for n, op in enumerate(raw_ops))
    return FilePatch(
        path, str(hashes[0]), str(hashes[1]), tuple(sorted(ops, key=lambda o: o.start))
    )


def _op(where: str, raw: object) -> Op:
    if not isinstance(raw, dict):
        raise InvalidAction(f"{where} is not an object")
    start, count = raw.get("start"), raw.get("count")
    if not isinstance(start, int) or not isinstance(count, int) or count < 0:
        raise InvalidAction(f"{where}: start and count must be integers")
    if isinstance(start, bool) or isinstance(count, bool):
        raise InvalidAction(f"{where}: start and count must be integers")
    old, new = raw.get("old"), raw.get("new")
    for name, lines in (("old", old), ("new", new)):
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise InvalidAction(f"{where}.{name} must be a list of strings")
    assert isinstance(old, list) and isinstance(new, list)
    for line in new:
        if "\n" in line or "\r" in line:
            raise InvalidAction(f"{where}.new holds a line break inside a line")
        if REDACTION_MARKER in line:
            # The agent writes real text only: a redacted value would replace the secret.
            raise InvalidAction(f"{where}.new contains the redaction marker {REDACTION_MARKER}")
    return Op(start, count, tuple(old), tuple(new))
