"""Writing a config file safely: an atomic rename where possible, else in place."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class FileMeta:
    """What a rewritten file must keep: mode and owner."""

    mode: int
    uid: int
    gid: int


def file_meta(path: str) -> FileMeta:
    """Mode (permission bits) and owner of a file."""
    st = os.stat(path)
    return FileMeta(st.st_mode & 0o7777, st.st_uid, st.st_gid)


def must_write_in_place(path: str) -> bool:
    """True when replacing the file by a rename would not change what its readers see.

    A bind-mounted file (another device than its directory) cannot be renamed over, and a
    hard-linked one would be split from its other names."""
    st = os.stat(path)
    return st.st_dev != os.stat(os.path.dirname(path)).st_dev or st.st_nlink > 1


def write_file(path: str, data: bytes, meta: FileMeta, *, in_place: bool) -> None:
    """Write `data` to `path` durably, keeping mode and owner."""
    if in_place:
        _write_in_place(path, data)
    else:
        _write_by_rename(path, data, meta)


def _write_by_rename(path: str, data: bytes, meta: FileMeta) -> None:
    directory, name = os.path.split(path)
    # A dot name: nginx's include globs (glob(3) without GLOB_PERIOD) never match it, so a
    # reload racing this write cannot pick the temp file up.
    tmp = os.path.join(directory, f".{name}.nginx-fleet-agent.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchown(handle.fileno(), meta.uid, meta.gid)
            os.fchmod(handle.fileno(), meta.mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(tmp)
        raise
    fsync_dir(directory)


def _write_in_place(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "wb") as handle:
        handle.truncate(0)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def write_private(path: str, data: bytes) -> None:
    """Write one of the agent's own files (journal, backup) atomically, mode 0600."""
    tmp = f"{path}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path))


def fsync_dir(directory: str) -> None:
    """Make a rename or a new entry in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_bytes(path: str) -> bytes:
    """A file's bytes."""
    with open(path, "rb") as handle:
        return handle.read()


def _remove_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
