"""Applying changes to a real nginx on loopback: live, refused, rolled back, recovered."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from nginx_fleet_agent.apply.journal import FINISHED, Journal
from nginx_fleet_agent.apply.nginx_control import live_workers

from tests.apply_helpers import (
    dumped_texts,
    insert_after,
    line_no,
    make_action,
    make_applier,
    outcome,
    site_conf,
    steps,
)
from tests.nginx_instance import NGINX, NginxInstance

ADD_HEADER = ["            add_header X-Applied yes always;"]


def _header(instance: NginxInstance) -> str | None:
    response = httpx.get(instance.base_url + "/", timeout=5, trust_env=False)
    assert response.status_code == 200
    assert response.text == "hello\n"
    return response.headers.get("x-applied")


def _workers(instance: NginxInstance) -> set[int]:
    return live_workers(Path("/proc"), int(instance.pid_file.read_text()))


def _tree(prefix: Path) -> dict[str, bytes]:
    """Every file under the prefix's conf dir with its bytes."""
    return {str(p): p.read_bytes() for p in sorted((prefix / "conf").rglob("*")) if p.is_file()}


def test_good_change_is_applied_and_changes_what_nginx_serves(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    applier, store = make_applier(nginx, tmp_path / "state")
    target = site_conf(nginx)
    before = target.read_bytes()
    old_workers = _workers(nginx)
    action = make_action(nginx, target, lambda text: insert_after(text, "location / {", ADD_HEADER))
    assert _header(nginx) is None

    assert applier.apply(action) == "verified"

    assert steps(store) == [
        ("received", "ok"),
        ("check", "ok"),
        ("backup", "ok"),
        ("write", "ok"),
        ("test", "started"),
        ("test", "ok"),
        ("reload", "ok"),
        ("verify", "started"),
        ("verify", "ok"),
        ("outcome", "verified"),
    ]
    assert [r["seq"] for r in store.pending(100)] == list(range(1, 11))
    assert _header(nginx) == "yes"
    assert not _workers(nginx) & old_workers
    lines = before.decode().split("\n")
    at = line_no(before.decode(), "location / {")
    assert target.read_bytes().decode().split("\n") == lines[:at] + ADD_HEADER + lines[at:]
    # The next nginx -T shows the file at new_sha256.
    assert dumped_texts(nginx)[str(target)].count("X-Applied") == 1
    # A repeat of the same action (the server repeats it until it hears a step) is ignored.
    assert applier.apply(action) is None
    assert len(store.pending(100)) == 10


def test_journal_and_backup_live_outside_the_config_tree(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    applier, store = make_applier(nginx, state)
    target = site_conf(nginx)
    before_tree = _tree(nginx.prefix)
    action = make_action(nginx, target, lambda text: insert_after(text, "location / {", ADD_HEADER))

    assert applier.apply(action) == "verified"

    journal_dir = Path(outcome(store)["detail"].get("journal") or state / "apply" / "1")
    journal = Journal.load(state / "apply" / "1")
    assert journal is not None and journal.phase == FINISHED
    assert journal.backup_of(journal.files[0]) == before_tree[str(target)]
    assert not str(journal_dir).startswith(str(nginx.prefix))
    # No backup or temp file beside the config: only the target changed.
    after_tree = _tree(nginx.prefix)
    assert set(after_tree) == set(before_tree)
    assert {p for p in after_tree if after_tree[p] != before_tree[p]} == {str(target)}
    assert oct((state / "apply" / "1").stat().st_mode & 0o777) == "0o700"


def test_change_failing_nginx_t_is_rolled_back_byte_for_byte(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    applier, store = make_applier(nginx, tmp_path / "state")
    target = site_conf(nginx)
    before_tree = _tree(nginx.prefix)
    old_workers = _workers(nginx)
    action = make_action(
        nginx, target, lambda text: insert_after(text, "location / {", ["            gzp on;"])
    )

    assert applier.apply(action) == "rolled_back"

    result = outcome(store)
    assert result["detail"]["failed_step"] == "test"
    assert 'unknown directive "gzp"' in result["message"]
    assert "[emerg]" in result["message"]
    assert ("test", "failed") in steps(store)
    assert ("restore", "ok") in steps(store)
    assert _tree(nginx.prefix) == before_tree
    # nginx was never reloaded: the same workers still serve the old behaviour.
    assert _workers(nginx) == old_workers
    assert _header(nginx) is None
    # The failed version is kept as evidence in the journal.
    evidence = tmp_path / "state" / "apply" / "1" / "new-0"
    assert b"gzp on;" in evidence.read_bytes()


def test_stale_base_hash_is_refused_with_nothing_written(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    applier, store = make_applier(nginx, tmp_path / "state")
    target = site_conf(nginx)
    action = make_action(nginx, target, lambda text: insert_after(text, "location / {", ADD_HEADER))
    # Someone edits the file after the diff was made.
    target.write_text(target.read_text() + "# edited by hand\n")
    before_tree = _tree(nginx.prefix)

    assert applier.apply(action) == "refused"

    assert outcome(store)["detail"] == {"reason": "stale"}
    assert steps(store) == [("received", "ok"), ("check", "failed"), ("outcome", "refused")]
    assert _tree(nginx.prefix) == before_tree
    assert not (tmp_path / "state" / "apply" / "1").exists()


def test_paths_outside_the_config_set_are_refused(nginx: NginxInstance, tmp_path: Path) -> None:
    applier, store = make_applier(nginx, tmp_path / "state")
    target = site_conf(nginx)
    good = make_action(nginx, target, lambda text: insert_after(text, "location / {", ADD_HEADER))
    outside = tmp_path / "outside.conf"
    outside.write_bytes(target.read_bytes())
    # A file with the very same text (so the same hash) that nginx does not load.
    not_loaded = dict(good, action_id=2, files=[dict(good["files"][0], path=str(outside))])
    # A name inside the config dir that leads outside through a symlink.
    link = nginx.prefix / "conf" / "link.conf"
    link.symlink_to(outside)
    via_link = dict(good, action_id=3, files=[dict(good["files"][0], path=str(link))])
    before_outside, before_tree = outside.read_bytes(), _tree(nginx.prefix)

    assert applier.apply(not_loaded) == "refused"
    assert outcome(store)["detail"] == {"reason": "path"}
    assert applier.apply(via_link) == "refused"
    assert outcome(store)["detail"] == {"reason": "path"}

    assert outside.read_bytes() == before_outside
    assert _tree(nginx.prefix) == before_tree
    assert _header(nginx) is None


def test_symlink_into_the_config_set_is_written_at_its_target(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    applier, _store = make_applier(nginx, tmp_path / "state")
    target = site_conf(nginx)
    alias = tmp_path / "alias.conf"
    alias.symlink_to(target)
    action = make_action(nginx, target, lambda text: insert_after(text, "location / {", ADD_HEADER))
    action["files"][0]["path"] = str(alias)

    assert applier.apply(action) == "verified"

    assert alias.is_symlink() and b"X-Applied" in target.read_bytes()
    assert _header(nginx) == "yes"


def test_new_line_with_the_redaction_marker_is_refused(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    applier, store = make_applier(nginx, tmp_path / "state")
    target = site_conf(nginx)
    before = target.read_bytes()
    line = ['            proxy_set_header X-Token "[redacted]";']
    action = make_action(nginx, target, lambda text: insert_after(text, "location / {", line))

    assert applier.apply(action) == "refused"

    assert outcome(store)["detail"] == {"reason": "invalid"}
    assert target.read_bytes() == before


def test_reload_without_new_workers_fails_verify_and_restores(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    applier, store = make_applier(nginx, tmp_path / "state")
    target = site_conf(nginx)
    before = target.read_bytes()
    # `nginx -t` does not bind sockets, so a port someone else holds passes the test and
    # makes the reload itself fail: the master keeps its old workers.
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        action = make_action(
            nginx,
            target,
            lambda text: insert_after(
                text, f"listen 127.0.0.1:{nginx.port};", [f"        listen 127.0.0.1:{port};"]
            ),
        )

        assert applier.apply(action) == "rolled_back"

    result = outcome(store)
    assert result["detail"]["failed_step"] == "verify"
    assert "Address already in use" in result["message"]
    assert steps(store)[-4:] == [
        ("verify", "failed"),
        ("restore", "ok"),
        ("reload", "ok"),
        ("outcome", "rolled_back"),
    ]
    assert target.read_bytes() == before
    assert _header(nginx) is None


def test_crlf_file_without_final_newline_keeps_both(
    nginx_factory: Callable[..., NginxInstance], tmp_path: Path
) -> None:
    nginx = nginx_factory(start=False)
    target = site_conf(nginx)
    text = target.read_text().strip("\n")
    target.write_bytes(text.replace("\n", "\r\n").encode())
    nginx.start()
    applier, _store = make_applier(nginx, tmp_path / "state")
    action = make_action(nginx, target, lambda t: insert_after(t, "location / {", ADD_HEADER))

    assert applier.apply(action) == "verified"

    data = target.read_bytes()
    assert not data.endswith(b"\n")
    assert data.count(b"\n") == data.count(b"\r\n") == text.count("\n") + 1
    assert b"add_header X-Applied yes always;\r\n" in data
    assert _header(nginx) == "yes"


SECRET_SERVER = """
    server {
        listen 127.0.0.1:{port};
        location = /nginx_status {
            stub_status;
        }
        location / {
            proxy_set_header X-Upstream-Token "Zq8vX2mT9kLp4RwN7bYc3HsD6fGj";
            return 200 "hello\\n";
        }
    }
"""


def test_secret_line_is_kept_byte_for_byte_when_another_line_is_patched(
    nginx_factory: Callable[..., NginxInstance], tmp_path: Path
) -> None:
    nginx = nginx_factory(SECRET_SERVER)
    target = site_conf(nginx)
    secret_line = next(
        line for line in target.read_bytes().split(b"\n") if b"X-Upstream-Token" in line
    )
    texts = dumped_texts(nginx)
    assert b"Zq8vX2mT9kLp4RwN7bYc3HsD6fGj" in secret_line
    assert "Zq8vX2mT9kLp4RwN7bYc3HsD6fGj" not in texts[str(target)]
    applier, store = make_applier(nginx, tmp_path / "state")
    # The op's context is the secret line itself (in its redacted form, as the server has it).
    redacted_secret = next(
        line for line in texts[str(target)].split("\n") if "X-Upstream-Token" in line
    )
    action = make_action(
        nginx,
        target,
        lambda text: [
            {
                "start": line_no(text, "X-Upstream-Token"),
                "count": 1,
                "old": [redacted_secret],
                "new": [redacted_secret.replace("X-Upstream-Token", "X-Renamed")],
            }
        ],
    )
    # A line holding the marker may not be written: the secret would become "[redacted]".
    assert applier.apply(action) == "refused"
    assert outcome(store)["detail"] == {"reason": "invalid"}

    action = make_action(
        nginx, target, lambda text: insert_after(text, "X-Upstream-Token", ADD_HEADER), 2
    )
    assert applier.apply(action) == "verified"

    lines = target.read_bytes().split(b"\n")
    assert secret_line in lines
    assert lines[lines.index(secret_line) + 1] == ADD_HEADER[0].encode()
    assert _header(nginx) == "yes"


def test_agent_killed_after_reload_restores_at_restart(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    target = site_conf(nginx)
    before = target.read_bytes()
    action = make_action(nginx, target, lambda text: insert_after(text, "location / {", ADD_HEADER))
    marker = tmp_path / "stopped"
    spec = {
        "nginx": NGINX,
        "pid_file": str(nginx.pid_file),
        "state_dir": str(state),
        "action": action,
        "stop_after": "reload",
        "marker": str(marker),
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.apply_child", json.dumps(spec)],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert child.poll() is None, "the apply process exited before the reload"
            assert time.monotonic() < deadline, "the apply did not reach the reload"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert b"X-Applied" in target.read_bytes()
    _wait_for(lambda: _header(nginx) == "yes")

    applier, store = make_applier(nginx, state)
    applier.recover()

    result = outcome(store)
    assert result["status"] == "rolled_back"
    assert result["detail"]["failed_step"] == "interrupted"
    # Numbering goes on from the reports the killed process spooled.
    seqs = [r["seq"] for r in store.pending(100)]
    assert seqs == list(range(1, len(seqs) + 1))
    assert steps(store)[-3:] == [("restore", "ok"), ("reload", "ok"), ("outcome", "rolled_back")]
    assert target.read_bytes() == before
    _wait_for(lambda: _header(nginx) is None)
    # A second start finds nothing left to do.
    applier.recover()
    assert len(store.pending(100)) == len(seqs)


def test_agent_killed_after_write_restores_without_reload(
    nginx: NginxInstance, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    target = site_conf(nginx)
    before = target.read_bytes()
    action = make_action(nginx, target, lambda text: insert_after(text, "location / {", ADD_HEADER))
    marker = tmp_path / "stopped"
    spec = {
        "nginx": NGINX,
        "pid_file": str(nginx.pid_file),
        "state_dir": str(state),
        "action": action,
        "stop_after": "write",
        "marker": str(marker),
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.apply_child", json.dumps(spec)],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        _wait_for(marker.exists, timeout=30)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    old_workers = _workers(nginx)
    assert b"X-Applied" in target.read_bytes()

    applier, store = make_applier(nginx, state)
    applier.recover()

    assert outcome(store)["detail"]["failed_step"] == "interrupted"
    assert target.read_bytes() == before
    assert _workers(nginx) == old_workers
    assert _header(nginx) is None


def test_not_allowed_is_refused_without_writing(nginx: NginxInstance, tmp_path: Path) -> None:
    applier, store = make_applier(nginx, tmp_path / "state")
    target = site_conf(nginx)
    before = target.read_bytes()
    action = make_action(nginx, target, lambda text: insert_after(text, "location / {", ADD_HEADER))

    applier.refuse_unstarted(action, "not_allowed", "applying changes is not allowed")

    assert outcome(store)["status"] == "refused"
    assert outcome(store)["detail"] == {"reason": "not_allowed"}
    assert target.read_bytes() == before
    applier.apply(action)  # a repeat: already settled
    assert len(store.pending(10)) == 2


def _wait_for(condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
