"""The access-log tail against real files, written the way nginx writes them, and a real nginx."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from nginx_fleet_agent.access_log.tail import FINGERPRINT_BYTES, FileTail, TailState

from tests.nginx_instance import NGINX, PLAIN_SERVER, NginxInstance


class FakeClock:
    """A monotonic clock the test moves by hand, so waits after a rename take no real time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class NginxLikeWriter:
    """Writes whole lines through one O_APPEND descriptor; `reopen` does what nginx does on USR1."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = self._open()

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, *lines: bytes) -> None:
        for line in lines:
            os.write(self.fd, line)

    def reopen(self) -> None:
        os.close(self.fd)
        self.fd = self._open()

    def close(self) -> None:
        os.close(self.fd)


def line(i: int, tag: str = "a") -> bytes:
    """One combined-format line, unique by `tag` and `i`."""
    return (
        f'127.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET /{tag}/{i:06d} HTTP/1.1" 200 6 "-" '
        f'"test"\n'
    ).encode()


def lines(start: int, stop: int, tag: str = "a") -> list[bytes]:
    """Lines `start` to `stop - 1`."""
    return [line(i, tag) for i in range(start, stop)]


def read_lines(tail: FileTail) -> list[bytes]:
    """One `read()` split into lines, checking every chunk holds whole lines only."""
    chunks = tail.read()
    for chunk in chunks:
        assert chunk.endswith(b"\n")
    return b"".join(chunks).splitlines(keepends=True)


def file_lines(path: Path) -> list[bytes]:
    """The lines of a file on disk."""
    return path.read_bytes().splitlines(keepends=True)


def reopen_state(state: TailState | None) -> TailState | None:
    """The state as a restarted agent gets it back from its database."""
    assert state is not None
    return TailState.from_json(json.loads(json.dumps(state.to_json())))


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    """Where the access log is; its directory holds nothing else yet."""
    (tmp_path / "logs").mkdir()
    return tmp_path / "logs" / "access.log"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory other users may enter (root's pytest tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="nginx-fleet-tail-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_start_at_end_reads_only_lines_written_after_the_start(log_path: Path) -> None:
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 100))
    # A line half written when the agent starts is read once whole, not as a fragment.
    writer.write(line(100)[:30])
    with FileTail(str(log_path), None, start_at_end=True) as tail:
        assert read_lines(tail) == []
        writer.write(line(100)[30:], *lines(101, 105))
        assert read_lines(tail) == lines(100, 105)
        assert tail.status == "ok"
        assert tail.reason is None
    writer.close()


def test_start_at_beginning_reads_existing_lines(log_path: Path) -> None:
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 100))
    with FileTail(str(log_path), None, start_at_end=False) as tail:
        assert read_lines(tail) == lines(0, 100)
        assert read_lines(tail) == []
    writer.close()


def test_a_missing_file_is_followed_from_its_first_line_also_across_a_restart(
    log_path: Path,
) -> None:
    tail = FileTail(str(log_path), None, start_at_end=True)
    assert read_lines(tail) == []
    assert (tail.status, tail.reason) == ("missing", "file does not exist")
    saved_while_missing = reopen_state(tail.state)
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 3))
    assert read_lines(tail) == lines(0, 3)
    assert tail.status == "ok"
    tail.close()
    # A restart whose saved position was taken while the file was missing also starts at 0.
    with FileTail(str(log_path), saved_while_missing, start_at_end=True) as restarted:
        assert read_lines(restarted) == lines(0, 3)
    writer.close()


def test_a_restart_mid_file_neither_rereads_nor_skips_a_line(log_path: Path) -> None:
    writer = NginxLikeWriter(log_path)
    tail = FileTail(str(log_path), None, start_at_end=False)
    writer.write(*lines(0, 10), line(10)[:25])
    assert read_lines(tail) == lines(0, 10)
    saved = reopen_state(tail.state)
    assert saved is not None
    assert saved.offset == len(b"".join(lines(0, 10)))
    # Taken when the file was empty, the fingerprint grew with it.
    first_bytes = log_path.read_bytes()[:FINGERPRINT_BYTES]
    assert saved.fingerprint == hashlib.sha256(first_bytes).hexdigest()
    assert saved.fingerprint_len == FINGERPRINT_BYTES
    tail.close()
    writer.write(line(10)[25:], *lines(11, 16))
    with FileTail(str(log_path), saved, start_at_end=True) as restarted:
        assert read_lines(restarted) == lines(10, 16)
        writer.write(*lines(16, 18))
        assert read_lines(restarted) == lines(16, 18)
    writer.close()


def test_rename_rotation_reads_the_old_file_to_its_end_before_the_new_one(
    log_path: Path, clock: FakeClock
) -> None:
    rotated = log_path.with_name("access.log.1")
    writer = NginxLikeWriter(log_path)
    tail = FileTail(str(log_path), None, start_at_end=False, rotate_wait_s=5.0, clock=clock)
    writer.write(*lines(0, 100))
    collected = read_lines(tail)
    old_inode = log_path.stat().st_ino

    # logrotate: rename, create the new file; nginx writes on to the old one until it reopens.
    log_path.rename(rotated)
    log_path.touch()
    writer.write(*lines(100, 150))
    collected += read_lines(tail)
    writer.write(*lines(150, 160))
    writer.reopen()
    writer.write(*lines(160, 200))
    collected += read_lines(tail)
    assert collected == lines(0, 160)
    state = tail.state
    assert state is not None
    assert state.inode == old_inode

    # The old file has been idle, but not yet for rotate_wait_s: the new one waits.
    assert read_lines(tail) == []
    clock.now += 5.0
    collected += read_lines(tail)
    assert collected == lines(0, 200)
    assert collected == file_lines(rotated) + file_lines(log_path)
    state = tail.state
    assert state is not None
    assert state.inode == log_path.stat().st_ino
    tail.close()
    writer.close()


def test_the_old_file_is_let_go_only_after_a_read_found_it_idle(log_path: Path) -> None:
    writer = NginxLikeWriter(log_path)
    tail = FileTail(str(log_path), None, start_at_end=False, rotate_wait_s=0.0)
    log_path.rename(log_path.with_name("access.log.1"))
    log_path.touch()
    writer.write(*lines(0, 10))
    assert read_lines(tail) == lines(0, 10)
    # Even without a wait, the first read after the rename must not let the old file go.
    writer.write(*lines(10, 20))
    writer.reopen()
    writer.write(*lines(20, 30))
    assert read_lines(tail) == lines(10, 20)
    assert read_lines(tail) == lines(20, 30)
    tail.close()
    writer.close()


def test_rename_rotation_noticed_after_a_restart_finds_the_old_file_by_inode(
    log_path: Path, clock: FakeClock
) -> None:
    rotated = log_path.with_name("access.log.1")
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 50))
    tail = FileTail(str(log_path), None, start_at_end=False)
    assert read_lines(tail) == lines(0, 50)
    saved = reopen_state(tail.state)
    tail.close()

    log_path.rename(rotated)
    log_path.touch()
    writer.write(*lines(50, 60))
    writer.reopen()
    writer.write(*lines(60, 70))
    # A compressed older rotation and an unrelated file sit next to it.
    log_path.with_name("access.log.2.gz").write_bytes(b"\x1f\x8b not really gzip")
    log_path.with_name("error.log").write_bytes(b"x\n")

    with FileTail(str(log_path), saved, start_at_end=True, clock=clock) as restarted:
        collected = read_lines(restarted)
        assert collected == lines(50, 60)
        clock.now += 5.0
        collected += read_lines(restarted)
    assert collected == lines(50, 70)
    assert lines(0, 50) + collected == file_lines(rotated) + file_lines(log_path)
    writer.close()


def test_the_inode_search_does_not_follow_symlinks_out_of_the_directory(
    log_path: Path, tmp_path: Path, clock: FakeClock
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 50))
    tail = FileTail(str(log_path), None, start_at_end=False)
    assert read_lines(tail) == lines(0, 50)
    saved = reopen_state(tail.state)
    tail.close()

    log_path.rename(elsewhere / "access.log.1")
    writer.write(*lines(50, 60))
    log_path.with_name("access.log.1").symlink_to(elsewhere / "access.log.1")
    writer.reopen()
    writer.write(*lines(60, 70))

    with FileTail(str(log_path), saved, start_at_end=True, clock=clock) as restarted:
        assert read_lines(restarted) == lines(60, 70)
    writer.close()


def test_copytruncate_reads_the_rest_of_the_copy_then_the_live_file(
    log_path: Path, tmp_path: Path
) -> None:
    copy = log_path.with_name("access.log.1")
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 50))
    tail = FileTail(str(log_path), None, start_at_end=False)
    collected = read_lines(tail)
    writer.write(*lines(50, 100))

    shutil.copyfile(log_path, copy)
    # Lost by copytruncate itself: in neither the copy nor the truncated file.
    writer.write(*lines(100, 105))
    os.truncate(log_path, 0)
    writer.write(*lines(105, 150))

    # Decoys that start like the copy and hold the offset, but are not to be read: a
    # compressed name, and a symlink to a file outside the directory; both are newer.
    decoy = b"".join(lines(0, 60)) + b"".join(lines(0, 40, tag="decoy"))
    log_path.with_name("access.log.2.gz").write_bytes(decoy)
    (tmp_path / "outside.log").write_bytes(decoy)
    log_path.with_name("access.log.0").symlink_to(tmp_path / "outside.log")
    # Also starting like it: a newer file too short to hold the offset, and an older copy
    # that is shorter than the newest one.
    too_short = log_path.with_name("access.log.partial")
    too_short.write_bytes(b"".join(lines(0, 30)))
    older = log_path.with_name("access.log.bak")
    older.write_bytes(b"".join(lines(0, 60)))
    now = time.time()
    os.utime(too_short, (now + 3600, now + 3600))
    os.utime(older, (now - 3600, now - 3600))

    collected += read_lines(tail)
    collected += read_lines(tail)
    assert collected == file_lines(copy) + file_lines(log_path)
    assert collected == lines(0, 100) + lines(105, 150)
    tail.close()
    writer.close()


def test_copytruncate_is_noticed_by_fingerprint_when_the_file_regrew_past_the_offset(
    log_path: Path,
) -> None:
    copy = log_path.with_name("access.log.1")
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 10))
    tail = FileTail(str(log_path), None, start_at_end=False)
    collected = read_lines(tail)
    writer.write(*lines(10, 20))
    shutil.copyfile(log_path, copy)
    os.truncate(log_path, 0)
    writer.write(*lines(20, 200, tag="after"))
    state = tail.state
    assert state is not None
    # Size alone cannot tell: the live file is longer than the offset again.
    assert log_path.stat().st_size > state.offset

    collected += read_lines(tail)
    assert collected == file_lines(copy) + file_lines(log_path)
    assert collected == lines(0, 20) + lines(20, 200, tag="after")
    tail.close()
    writer.close()


def test_copytruncate_while_stopped_is_noticed_at_the_restart(log_path: Path) -> None:
    copy = log_path.with_name("access.log.1")
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 10))
    tail = FileTail(str(log_path), None, start_at_end=False)
    collected = read_lines(tail)
    saved = reopen_state(tail.state)
    tail.close()
    writer.write(*lines(10, 20))
    shutil.copyfile(log_path, copy)
    os.truncate(log_path, 0)
    writer.write(*lines(20, 30, tag="after"))

    with FileTail(str(log_path), saved, start_at_end=True) as restarted:
        collected += read_lines(restarted)
    assert collected == file_lines(copy) + file_lines(log_path)
    writer.close()


def test_a_deleted_file_is_missing_then_read_from_its_start_when_it_appears(
    log_path: Path, clock: FakeClock
) -> None:
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 3))
    tail = FileTail(str(log_path), None, start_at_end=False, clock=clock)
    assert read_lines(tail) == lines(0, 3)
    writer.write(*lines(3, 5))
    log_path.unlink()
    # What was written before the deletion is still read, from the open descriptor.
    assert read_lines(tail) == lines(3, 5)
    assert (tail.status, tail.reason) == ("missing", "file does not exist")
    writer.close()
    clock.now += 5.0
    assert read_lines(tail) == []
    assert tail.state is not None
    assert tail.state.inode == 0

    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 4, tag="new"))
    assert read_lines(tail) == lines(0, 4, tag="new")
    assert tail.status == "ok"
    tail.close()
    writer.close()


def _directory(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _symlink_loop(path: Path) -> None:
    path.symlink_to(path.name)


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_directory, "not a regular file: a directory"),
        (_fifo, "not a regular file: a FIFO"),
        (_symlink_loop, "Too many levels of symbolic links"),
    ],
)
def test_something_else_at_the_path_is_unreadable_until_a_file_is_there(
    log_path: Path, make: Callable[[Path], None], reason: str
) -> None:
    make(log_path)
    tail = FileTail(str(log_path), None, start_at_end=False)
    assert read_lines(tail) == []
    assert (tail.status, tail.reason) == ("unreadable", reason)
    assert read_lines(tail) == []
    if log_path.is_dir() and not log_path.is_symlink():
        log_path.rmdir()
    else:
        log_path.unlink()
    log_path.write_bytes(b"".join(lines(0, 3)))
    assert read_lines(tail) == lines(0, 3)
    assert (tail.status, tail.reason) == ("ok", None)
    tail.close()


def test_a_followed_file_replaced_by_a_directory_is_unreadable_and_its_lines_kept(
    log_path: Path, clock: FakeClock
) -> None:
    writer = NginxLikeWriter(log_path)
    writer.write(*lines(0, 3))
    tail = FileTail(str(log_path), None, start_at_end=False, clock=clock)
    assert read_lines(tail) == lines(0, 3)
    log_path.rename(log_path.with_name("access.log.old"))
    log_path.mkdir()
    writer.write(*lines(3, 5))
    assert read_lines(tail) == lines(3, 5)
    assert (tail.status, tail.reason) == ("unreadable", "not a regular file: a directory")
    tail.close()
    writer.close()


def _read_twice_in_a_child(path: Path, *, uid: int | None) -> tuple[int, int, int]:
    """Fork a reader of `path` (as `uid`); (pid, its report fd, the fd that lets it read again)."""
    # Forked, not started anew: another user may not be allowed to run this interpreter.
    report_r, report_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(report_w)
        os.close(go_r)
        return pid, report_r, go_w
    status = 1
    try:
        os.close(report_r)
        os.close(go_w)
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        with FileTail(str(path), None, start_at_end=False) as tail:
            first = tail.read()
            os.write(report_w, json.dumps([tail.status, tail.reason, len(first)]).encode() + b"\n")
            os.read(go_r, 1)
            second = b"".join(tail.read()).decode()
            os.write(report_w, json.dumps([tail.status, tail.reason, second]).encode() + b"\n")
        status = 0
    finally:
        os._exit(status)


def test_permission_denied_is_unreadable_and_retried(shared_dir: Path) -> None:
    log_path = shared_dir / "access.log"
    log_path.write_bytes(b"".join(lines(0, 3)))
    log_path.chmod(0)
    # root reads any file: the reader runs as nobody then, so the denial is real in both cases.
    uid = 65534 if os.geteuid() == 0 else None
    pid, report_fd, go_fd = _read_twice_in_a_child(log_path, uid=uid)
    with os.fdopen(report_fd, "rb") as report:
        try:
            assert json.loads(report.readline()) == ["unreadable", "Permission denied", 0]
            log_path.chmod(0o644)
            os.write(go_fd, b"g")
            assert json.loads(report.readline()) == ["ok", None, b"".join(lines(0, 3)).decode()]
        finally:
            os.close(go_fd)
            _, wait_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 0


def test_a_huge_log_is_read_in_bounded_steps(log_path: Path) -> None:
    block = b"".join(lines(0, 1000))
    with log_path.open("wb") as out:
        for _ in range(300):
            out.write(block)
    max_read = 2 << 20
    size = log_path.stat().st_size
    assert size > 10 * max_read
    tail = FileTail(str(log_path), None, start_at_end=False, max_read_bytes=max_read)
    read_back = 0
    calls = 0
    tracemalloc.start()
    try:
        while True:
            tracemalloc.reset_peak()
            chunks = tail.read()
            _, peak = tracemalloc.get_traced_memory()
            got = sum(len(c) for c in chunks)
            if got == 0:
                break
            calls += 1
            assert got <= max_read
            assert peak < 3 * max_read, "memory grows with the log"
            assert all(c.endswith(b"\n") and len(c) <= max_read for c in chunks)
            read_back += got
            del chunks
    finally:
        tracemalloc.stop()
    tail.close()
    assert read_back == size
    assert calls >= size // max_read


def test_a_line_longer_than_max_read_bytes_is_skipped_and_counted(log_path: Path) -> None:
    max_read = 64 << 10
    long_line = b"L" * (200 << 10) + b"\n"
    writer = NginxLikeWriter(log_path)
    writer.write(line(0), long_line, line(1))
    tail = FileTail(str(log_path), None, start_at_end=False, max_read_bytes=max_read)
    collected: list[bytes] = []
    for _ in range(10):
        collected += read_lines(tail)
    assert collected == [line(0), line(1)]
    assert tail.skipped_long_lines == len(long_line)
    tail.close()
    writer.close()


def test_a_long_line_still_being_written_is_skipped_across_a_restart(log_path: Path) -> None:
    max_read = 64 << 10
    first_half = b"L" * (100 << 10)
    second_half = b"L" * (100 << 10) + b"\n"
    writer = NginxLikeWriter(log_path)
    writer.write(line(0), first_half)
    tail = FileTail(str(log_path), None, start_at_end=False, max_read_bytes=max_read)
    collected: list[bytes] = []
    for _ in range(5):
        collected += read_lines(tail)
    saved = reopen_state(tail.state)
    assert saved is not None
    assert saved.in_long_line
    skipped = tail.skipped_long_lines
    tail.close()

    writer.write(second_half, line(1))
    with FileTail(str(log_path), saved, start_at_end=True, max_read_bytes=max_read) as restarted:
        for _ in range(5):
            collected += read_lines(restarted)
        skipped += restarted.skipped_long_lines
    assert collected == [line(0), line(1)]
    assert skipped == len(first_half) + len(second_half)
    writer.close()


def test_state_json_round_trip_and_malformed_states() -> None:
    state = TailState(12, 34, 5678, "ab" * 32, FINGERPRINT_BYTES, in_long_line=True)
    assert TailState.from_json(json.loads(json.dumps(state.to_json()))) == state
    good = state.to_json()
    for bad in (
        {},
        {**good, "inode": -1},
        {**good, "offset": "12"},
        {**good, "dev": True},
        {**good, "fingerprint": "zz" * 32},
        {**good, "fingerprint": "ab" * 31},
        {**good, "fingerprint_len": FINGERPRINT_BYTES + 1},
        {**good, "fingerprint_len": 0},
        {**good, "in_long_line": "yes"},
        {k: v for k, v in good.items() if k != "offset"},
    ):
        assert TailState.from_json(bad) is None
    not_mappings: tuple[object, ...] = (None, [], "state", 3)
    for not_a_mapping in not_mappings:
        assert TailState.from_json(not_a_mapping) is None  # type: ignore[arg-type]


_LOAD_REQUEST = re.compile(rb'"GET (/w\d+/\d+) HTTP/1\.1"')


def _load_lines(*paths: Path) -> int:
    """How many lines of the load's requests the files hold."""
    return sum(len(_LOAD_REQUEST.findall(p.read_bytes())) for p in paths if p.exists())


def test_real_nginx_under_load_renamed_and_reopened_loses_and_repeats_no_line(
    shared_dir: Path,
) -> None:
    # Under shared_dir: when root, nginx's workers run as nobody and must reopen the log.
    instance = NginxInstance.create(shared_dir / "nginx", PLAIN_SERVER)
    log_path = instance.prefix / "logs" / "access.log"
    rotated = log_path.with_name("access.log.1")
    instance.start()
    stop = threading.Event()
    sent: list[str] = []
    errors: list[BaseException] = []

    def load(worker: int) -> None:
        try:
            with httpx.Client(base_url=instance.base_url, trust_env=False, timeout=5) as client:
                for i in range(1500):
                    if stop.is_set():
                        return
                    uri = f"/w{worker}/{i}"
                    client.get(uri).raise_for_status()
                    sent.append(uri)
        except BaseException as exc:
            errors.append(exc)

    tail = FileTail(str(log_path), None, start_at_end=False, rotate_wait_s=1.0)
    collected: list[bytes] = []

    def read_until(done: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 30
        while not done():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            assert not errors, errors
            collected.extend(read_lines(tail))
            time.sleep(0.005)

    def read_load_lines() -> int:
        return len(_LOAD_REQUEST.findall(b"".join(collected)))

    threads = [threading.Thread(target=load, args=(n,)) for n in range(2)]
    try:
        for thread in threads:
            thread.start()
        read_until(lambda: len(collected) >= 100, "100 lines read")
        log_path.rename(rotated)
        at_rename = _load_lines(rotated)
        read_until(lambda: _load_lines(rotated) >= at_rename + 100, "writes after the rename")
        subprocess.run([NGINX, *instance.args, "-s", "reopen"], check=True)
        read_until(lambda: _load_lines(log_path) >= 100, "writes to the reopened log")
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        assert not errors, errors
        read_until(lambda: _load_lines(rotated, log_path) == len(sent), "every request logged")
        read_until(lambda: read_load_lines() >= len(sent), "every line read")
        # Long enough for the old file to be let go: nothing more may come.
        time.sleep(1.5)
        collected.extend(read_lines(tail))
    finally:
        stop.set()
        tail.close()
        instance.stop()

    assert collected == file_lines(rotated) + file_lines(log_path)
    uris = [m.group(1).decode() for m in map(_LOAD_REQUEST.search, collected) if m]
    assert sorted(uris) == sorted(sent)
    assert len(set(uris)) == len(uris)
