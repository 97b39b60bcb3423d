"""Follow one log file across rotation, truncation and restarts, returning whole lines.

Written for access logs and used for error logs too: the caller says which kind of log the file
is (`kind`), and the tail's own messages name it so."""

# nginx writes each line with one write() on a descriptor opened with O_APPEND and keeps it
# until it reopens its logs (USR1). logrotate either renames the file and creates a new one
# (nginx goes on writing to the renamed file until it reopens), or copies it and truncates it
# in place (copytruncate). So a renamed file is kept open and read to its end before the new
# one, and on a truncation the rest of the copy, found by its first bytes, is read first.

from __future__ import annotations

import hashlib
import logging
import os
import stat
import string
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Any

log = logging.getLogger(__name__)

FINGERPRINT_BYTES = 256
CHUNK_BYTES = 1 << 20
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".lzma", ".lz", ".z", ".zip", ".br")
_BACKSCAN_BYTES = 64 << 10
_EMPTY_FINGERPRINT = hashlib.sha256(b"").hexdigest()
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def _sha256(data: bytes) -> str:
    """Hex SHA-256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def _count(value: object) -> int | None:
    """`value` if it is a non-negative int (not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


@dataclass(frozen=True)
class TailState:
    """Position in one file: its identity, the next offset, a fingerprint of its first bytes."""

    # Inode 0 (no real file has it): no file was open, the next one at the path is read whole.
    inode: int
    dev: int
    offset: int
    # Hex SHA-256 of the first fingerprint_len bytes: FINGERPRINT_BYTES, fewer if it was shorter.
    fingerprint: str
    fingerprint_len: int
    # The offset is inside a line longer than max_read_bytes, skipped up to its newline.
    in_long_line: bool = False

    def to_json(self) -> dict[str, Any]:
        """The state as a JSON object."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TailState | None:
        """The state stored by `to_json`, or None when `data` is not a well-formed one."""
        if not isinstance(data, Mapping):
            return None
        try:
            inode, dev = _count(data.get("inode")), _count(data.get("dev"))
            offset, length = _count(data.get("offset")), _count(data.get("fingerprint_len"))
            fingerprint, in_long_line = data.get("fingerprint"), data.get("in_long_line", False)
        except Exception:  # a foreign Mapping may raise anything; a bad state means "no state"
            return None
        if inode is None or dev is None or offset is None or length is None:
            return None
        if not isinstance(fingerprint, str) or len(fingerprint) != 64:
            return None
        if not set(fingerprint) <= set(string.hexdigits.lower()):
            return None
        if length > FINGERPRINT_BYTES or (length == 0 and fingerprint != _EMPTY_FINGERPRINT):
            return None
        if not isinstance(in_long_line, bool):
            return None
        return cls(inode, dev, offset, fingerprint, length, in_long_line)


_NO_FILE = TailState(0, 0, 0, _EMPTY_FINGERPRINT, 0)


@dataclass
class _OpenFile:
    """One open file of the tail and where reading it stands."""

    fd: int
    dev: int
    inode: int
    offset: int
    fingerprint: str
    fingerprint_len: int
    in_long_line: bool = False
    # A copytruncate copy is complete when found: closed at its end without waiting.
    is_copy: bool = False
    # Set while the path names another file (or none): nginx may still write to this one.
    detached_at: float | None = None
    last_size: int = 0
    last_growth: float = 0.0
    idle_seen: bool = False

    def is_file(self, st: os.stat_result) -> bool:
        """Whether `st` describes this file."""
        return (st.st_dev, st.st_ino) == (self.dev, self.inode)

    def position(self) -> TailState:
        """The persistable position in this file."""
        return TailState(
            self.inode,
            self.dev,
            self.offset,
            self.fingerprint,
            self.fingerprint_len,
            self.in_long_line,
        )


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _reason(exc: OSError) -> str:
    """The errno's text of an OS error."""
    return exc.strerror or str(exc)


class FileTail:
    """Whole new lines of the file at `path`, surviving rotation, truncation and restarts.

    `kind` names the log in the agent's own messages ("access log", "error log")."""

    def __init__(
        self,
        path: str,
        state: TailState | None,
        *,
        start_at_end: bool,
        rotate_wait_s: float = 5.0,
        max_read_bytes: int = 8 << 20,
        clock: Callable[[], float] = time.monotonic,
        kind: str = "access log",
    ) -> None:
        if max_read_bytes <= 0:
            raise ValueError("max_read_bytes must be positive")
        self.path = path
        self.kind = kind
        self.status = "ok"
        self.reason: str | None = None
        self.skipped_long_lines = 0
        self._dir = os.path.dirname(path) or "."
        self._name = os.path.basename(path)
        self._initial = state
        self._start_at_end = start_at_end and state is None
        self._resolved = False
        self._rotate_wait_s = rotate_wait_s
        self._max_read_bytes = max_read_bytes
        self._clock = clock
        # Oldest first: only the first is read; the others wait until it is finished.
        self._files: list[_OpenFile] = []
        self._closed = False
        self._poll()

    @property
    def state(self) -> TailState | None:
        """Position after the last `read()`: what the caller stores with what it counted."""
        if not self._resolved:
            return self._initial
        if not self._files:
            return _NO_FILE
        return self._files[0].position()

    def read(self) -> list[bytes]:
        """Chunks of whole lines added since the last call, at most `max_read_bytes` in all."""
        if self._closed:
            return []
        path_st = self._poll()
        now = self._clock()
        chunks: list[bytes] = []
        budget = self._max_read_bytes
        while self._files and budget > 0:
            head = self._files[0]
            try:
                if path_st is not None and head.is_file(path_st) and not self._unchanged(head):
                    self._after_truncation(head)
                    continue
                budget, at_end = self._read_lines(head, budget, chunks)
            except OSError as exc:
                self._set_status("unreadable", _reason(exc))
                log.warning("%s %s: read failed: %s", self.kind, self.path, exc)
                break
            if not (at_end and self._finished(head, now)):
                break
            self._close_first()
        return chunks

    def close(self) -> None:
        """Close every open file; `read()` returns nothing afterwards."""
        while self._files:
            os.close(self._files.pop().fd)
        self._closed = True

    def __enter__(self) -> FileTail:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _set_status(self, status: str, reason: str | None) -> None:
        """Record what the path is now, for the caller's report."""
        self.status, self.reason = status, reason

    def _poll(self) -> os.stat_result | None:
        """Look at the path, apply the starting rule once, follow what the path names now."""
        known, path_st = self._stat_path()
        if known and not self._resolved and self.status != "unreadable":
            self._resolve(path_st)
        if known and self._resolved:
            self._track(path_st)
        return path_st

    def _stat_path(self) -> tuple[bool, os.stat_result | None]:
        """The path's regular file (or None); False when what it names cannot be told."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._set_status("missing", "file does not exist")
            return True, None
        except OSError as exc:
            self._set_status("unreadable", _reason(exc))
            return False, None
        if not stat.S_ISREG(st.st_mode):
            self._set_status("unreadable", f"not a regular file: {_kind(st.st_mode)}")
            return True, None
        self._set_status("ok", None)
        return True, st

    def _resolve(self, path_st: os.stat_result | None) -> None:
        """Decide where reading starts, from the saved state or the start rule."""
        state = self._initial
        if state is None:
            if path_st is not None:
                opened = self._open_path()
                if opened is None:
                    return
                if self._start_at_end:
                    try:
                        opened.offset, opened.in_long_line = self._end_of_last_line(opened)
                    except OSError as exc:
                        os.close(opened.fd)
                        self._set_status("unreadable", _reason(exc))
                        return
                self._files.append(opened)
            self._resolved = True
            return
        if path_st is not None and (path_st.st_dev, path_st.st_ino) == (state.dev, state.inode):
            opened = self._open_path()
            if opened is None:
                return
            if (opened.dev, opened.inode) != (state.dev, state.inode):
                # Renamed between stat() and open(): decide again on the next read.
                os.close(opened.fd)
                return
            # Checked against the file by the first read(): a mismatch is a truncation.
            opened.offset, opened.in_long_line = state.offset, state.in_long_line
            opened.fingerprint, opened.fingerprint_len = state.fingerprint, state.fingerprint_len
            self._files.append(opened)
        else:
            rotated = self._find_rotated(state)
            if rotated is not None:
                log.info(
                    "%s %s: rotated while stopped, reading the rest of it", self.kind, self.path
                )
                self._files.append(rotated)
            elif state.inode != 0:
                log.warning(
                    "%s %s: the file last read (inode %d) is gone; lines it gained "
                    "after offset %d are lost",
                    self.kind,
                    self.path,
                    state.inode,
                    state.offset,
                )
        self._resolved = True

    def _track(self, path_st: os.stat_result | None) -> None:
        """Open a new file at the path; time how long files it no longer names stay idle."""
        if path_st is not None and not any(f.is_file(path_st) for f in self._files):
            opened = self._open_path()
            if opened is not None:
                if any(f.dev == opened.dev and f.inode == opened.inode for f in self._files):
                    os.close(opened.fd)
                else:
                    self._files.append(opened)
        now = self._clock()
        for f in self._files:
            if path_st is not None and f.is_file(path_st):
                f.detached_at = None
                continue
            try:
                size = os.fstat(f.fd).st_size
            except OSError as exc:
                log.warning("%s %s: fstat of an old file failed: %s", self.kind, self.path, exc)
                continue
            if f.detached_at is None:
                f.detached_at = f.last_growth = now
                f.last_size, f.idle_seen = size, False
            elif size != f.last_size:
                f.last_size, f.last_growth, f.idle_seen = size, now, False
            else:
                f.idle_seen = True

    def _finished(self, f: _OpenFile, now: float) -> bool:
        """Whether a file read to its end is done with: a copy, or renamed and idle long enough."""
        if f.is_copy:
            return True
        if f.detached_at is None or not f.idle_seen:
            return False
        return now - f.last_growth >= self._rotate_wait_s

    def _close_first(self) -> None:
        """Close the file read to its end and go on with the next one."""
        f = self._files.pop(0)
        try:
            left = os.fstat(f.fd).st_size - f.offset
        except OSError:
            left = 0
        if left > 0:
            # nginx writes whole lines: a rest without a newline is a write cut short.
            log.warning(
                "%s %s: dropping %d bytes of an unfinished last line of an old file",
                self.kind,
                self.path,
                left,
            )
        os.close(f.fd)

    def _open_path(self) -> _OpenFile | None:
        """Open the path's regular file at offset 0, or None with the status saying why."""
        try:
            # O_NONBLOCK: a FIFO put at the path must not block the agent in open().
            fd = os.open(self.path, _OPEN_FLAGS)
        except FileNotFoundError:
            self._set_status("missing", "file does not exist")
            return None
        except OSError as exc:
            self._set_status("unreadable", _reason(exc))
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                os.close(fd)
                self._set_status("unreadable", f"not a regular file: {_kind(st.st_mode)}")
                return None
            head = os.pread(fd, FINGERPRINT_BYTES, 0)
        except OSError as exc:
            os.close(fd)
            self._set_status("unreadable", _reason(exc))
            return None
        return _OpenFile(
            fd, st.st_dev, st.st_ino, 0, _sha256(head), len(head), last_size=st.st_size
        )

    def _end_of_last_line(self, f: _OpenFile) -> tuple[int, bool]:
        """Offset just past the last whole line; inside a line too long to read: its end."""
        size = os.fstat(f.fd).st_size
        pos = size
        while pos > 0 and size - pos < self._max_read_bytes:
            step = min(_BACKSCAN_BYTES, pos)
            cut = os.pread(f.fd, step, pos - step).rfind(b"\n")
            if cut >= 0:
                return pos - step + cut + 1, False
            pos -= step
        if pos == 0:
            return 0, False
        return size, True

    def _unchanged(self, f: _OpenFile) -> bool:
        """Whether the file holds the offset and starts as fingerprinted; extends a short one."""
        if os.fstat(f.fd).st_size < f.offset:
            return False
        head = os.pread(f.fd, FINGERPRINT_BYTES, 0)
        if len(head) < f.fingerprint_len:
            return False
        if _sha256(head[: f.fingerprint_len]) != f.fingerprint:
            return False
        if len(head) > f.fingerprint_len:
            f.fingerprint, f.fingerprint_len = _sha256(head), len(head)
        return True

    def _after_truncation(self, f: _OpenFile) -> None:
        """Read the live file from its start, after the rest of its copy when there is one."""
        copy = self._find_copy(f)
        if copy is None:
            log.warning(
                "%s %s: truncated, and no copy of it holding offset %d found "
                "next to it; reading it from its start",
                self.kind,
                self.path,
                f.offset,
            )
        else:
            log.info(
                "%s %s: truncated (copytruncate), reading its copy first", self.kind, self.path
            )
            copy.in_long_line, copy.is_copy = f.in_long_line, True
            self._files.insert(0, copy)
        f.offset, f.in_long_line = 0, False
        f.fingerprint, f.fingerprint_len = _EMPTY_FINGERPRINT, 0

    def _find_rotated(self, state: TailState) -> _OpenFile | None:
        """The file of `state` under another name in the path's directory (a logrotate rename)."""
        for path, st in self._neighbours():
            if (st.st_dev, st.st_ino) != (state.dev, state.inode):
                continue
            found = self._open_matching(path, state.fingerprint, state.fingerprint_len, state)
            if found is not None:
                found.offset, found.in_long_line = state.offset, state.in_long_line
                return found
        return None

    def _find_copy(self, f: _OpenFile) -> _OpenFile | None:
        """The newest file next to the path that starts like `f` and is at least `f.offset` long."""
        open_ids = {(o.dev, o.inode) for o in self._files}
        candidates = [
            (path, st)
            for path, st in self._neighbours()
            if (st.st_dev, st.st_ino) not in open_ids and st.st_size >= f.offset
        ]
        candidates.sort(key=lambda item: item[1].st_mtime_ns, reverse=True)
        for path, _ in candidates:
            found = self._open_matching(path, f.fingerprint, f.fingerprint_len, None)
            if found is not None:
                found.offset = f.offset
                return found
        return None

    def _neighbours(self) -> list[tuple[str, os.stat_result]]:
        """Other regular, uncompressed files of the path's directory; symlinks are not followed."""
        try:
            with os.scandir(self._dir) as entries:
                listed = list(entries)
        except OSError as exc:
            log.warning("%s %s: cannot list its directory: %s", self.kind, self.path, exc)
            return []
        found = []
        for entry in listed:
            if entry.name == self._name or entry.name.lower().endswith(COMPRESSED_SUFFIXES):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                found.append((entry.path, st))
        return found

    def _open_matching(
        self, path: str, fingerprint: str, length: int, same_as: TailState | None
    ) -> _OpenFile | None:
        """`path` opened if it starts with the fingerprinted bytes (and is `same_as`'s file)."""
        try:
            # O_NOFOLLOW: a symlink swapped in since the listing must not lead out of the directory.
            fd = os.open(path, _OPEN_FLAGS | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            matches = stat.S_ISREG(st.st_mode) and (
                same_as is None
                or (
                    (st.st_dev, st.st_ino) == (same_as.dev, same_as.inode)
                    and st.st_size >= same_as.offset
                )
            )
            if matches:
                head = os.pread(fd, length, 0)
                matches = len(head) == length and _sha256(head) == fingerprint
        except OSError:
            matches = False
        if not matches:
            os.close(fd)
            return None
        return _OpenFile(fd, st.st_dev, st.st_ino, 0, fingerprint, length, last_size=st.st_size)

    def _read_lines(self, f: _OpenFile, budget: int, chunks: list[bytes]) -> tuple[int, bool]:
        """Append `f`'s whole lines to `chunks` within `budget` bytes; (budget left, at its end)."""
        if f.in_long_line:
            budget, at_end = self._skip_long_line(f, budget)
            if f.in_long_line:
                return budget, at_end
        pos = f.offset
        partial: list[bytes] = []
        partial_len = 0
        at_end = False
        while budget > 0:
            data = os.pread(f.fd, min(CHUNK_BYTES, budget), pos)
            if not data:
                at_end = True
                break
            budget -= len(data)
            pos += len(data)
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                partial.append(data)
                partial_len += len(data)
                continue
            whole = data if cut == len(data) else data[:cut]
            chunks.append(b"".join((*partial, whole)) if partial else whole)
            f.offset = pos - len(data) + cut
            partial = [data[cut:]] if cut < len(data) else []
            partial_len = len(data) - cut
        if partial_len >= self._max_read_bytes:
            # Never returnable whole: skip it rather than read it again on every call.
            self.skipped_long_lines += partial_len
            f.offset += partial_len
            f.in_long_line = True
        return budget, at_end

    def _skip_long_line(self, f: _OpenFile, budget: int) -> tuple[int, bool]:
        """Advance past the rest of a line too long to return; (budget left, at the end)."""
        while budget > 0:
            data = os.pread(f.fd, min(CHUNK_BYTES, budget), f.offset)
            if not data:
                return budget, True
            budget -= len(data)
            cut = data.find(b"\n") + 1
            skipped = cut if cut else len(data)
            self.skipped_long_lines += skipped
            f.offset += skipped
            if cut:
                f.in_long_line = False
                # The bytes after the newline were only peeked at: give them back.
                return budget + len(data) - cut, False
        return budget, False
