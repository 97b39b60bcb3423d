"""The pure parts of applying: line ops on bytes, the master's arguments, action checks."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from nginx_fleet_agent.apply.action import InvalidAction, parse_action
from nginx_fleet_agent.apply.nginx_control import NginxRun, config_test_failure, master_args
from nginx_fleet_agent.apply.store import ActionStore
from nginx_fleet_agent.apply.textpatch import Op, PatchError, check_ops, patch_bytes, split_bytes
from nginx_fleet_agent.config import ConfigError, load_config


def _op(start: int, count: int, new: list[str], old: list[str] | None = None) -> Op:
    return Op(start, count, tuple(old or []), tuple(new))


@pytest.mark.parametrize(
    ("data", "ops", "expected"),
    [
        (b"a\nb\n", [_op(2, 1, ["B"])], b"a\nB\n"),
        (b"a\nb", [_op(2, 1, ["B"])], b"a\nB"),
        (b"a\r\nb\r\n", [_op(2, 1, ["B", "C"])], b"a\r\nB\r\nC\r\n"),
        (b"a\r\nb", [_op(3, 0, ["c"])], b"a\r\nb\r\nc"),
        (b"a\r\nb\r\n", [_op(3, 0, ["c"])], b"a\r\nb\r\nc\r\n"),
        (b"a\nb\nc\n", [_op(1, 1, []), _op(3, 1, ["C"])], b"b\nC\n"),
        (b"\xff latin1\nb\n", [_op(2, 1, ["B"])], b"\xff latin1\nB\n"),
    ],
)
def test_patch_bytes_keeps_line_endings_and_final_newline(
    data: bytes, ops: list[Op], expected: bytes
) -> None:
    assert patch_bytes(data, ops) == expected


def test_check_ops_refuses_overlap_range_and_changed_lines() -> None:
    lines = ["a", "b", "c", ""]
    check_ops(lines, [Op(2, 1, ("b",), ("B",)), Op(5, 0, (), ("d",))])
    with pytest.raises(PatchError, match="not what"):
        check_ops(lines, [Op(2, 1, ("x",), ("B",))])
    with pytest.raises(PatchError, match="overlap"):
        check_ops(lines, [Op(1, 2, ("a", "b"), ()), Op(2, 1, ("b",), ())])
    with pytest.raises(PatchError, match="outside"):
        check_ops(lines, [Op(4, 2, ("", ""), ())])


def test_split_bytes_drops_the_newline_nginx_adds_after_each_file() -> None:
    raw = b"# configuration file /a.conf:\nx;\r\n\n# configuration file /b.conf:\ny;\n"
    assert split_bytes(raw) == {b"/a.conf": b"x;\r\n", b"/b.conf": b"y;"}


def test_master_args_from_its_title() -> None:
    title = "nginx: master process /usr/sbin/nginx -p /srv/x/ -c conf/nginx.conf"
    assert master_args(title) == ("-p", "/srv/x/", "-c", "conf/nginx.conf")
    spaced = "nginx: master process /usr/sbin/nginx -g daemon on; master_process on; -c /e/n.conf"
    assert master_args(spaced) == ("-g", "daemon on; master_process on;", "-c", "/e/n.conf")
    assert master_args("nginx: master process nginx -c/etc/n.conf") == ("-c", "/etc/n.conf")
    assert master_args("nginx: master process /usr/sbin/nginx") == ()


def test_nginx_t_fails_on_any_emerg_alert_or_crit() -> None:
    ok = "nginx: the configuration file /e/n.conf syntax is ok\n"
    assert config_test_failure(NginxRun(0, b"", ok)) is None
    assert config_test_failure(NginxRun(0, b"", "nginx: [warn] x\n" + ok)) is None
    alert = "nginx: [alert] could not open error log file\n" + ok
    assert (
        config_test_failure(NginxRun(0, b"", alert))
        == "nginx: [alert] could not open error log file"
    )
    assert config_test_failure(NginxRun(1, b"", "")) == "nginx -t exited with status 1"


def _action(**file: object) -> dict[str, object]:
    patch = {"path": "/e/n.conf", "base_sha256": "a" * 64, "new_sha256": "b" * 64, "ops": []}
    patch.update(file)
    return {"type": "apply", "action_id": 3, "files": [patch]}


def test_malformed_actions_are_invalid() -> None:
    assert parse_action(_action()).files[0].path == "/e/n.conf"
    for bad in (
        _action(path="relative.conf"),
        _action(base_sha256="nothex"),
        _action(ops=[{"start": 1, "count": 0, "old": [], "new": ["a\nb"]}]),
        _action(ops=[{"start": True, "count": 0, "old": [], "new": []}]),
        {"type": "resend", "action_id": 3, "files": []},
    ):
        with pytest.raises(InvalidAction):
            parse_action(bad)


def test_store_keeps_reports_and_started_ids_across_restarts(tmp_path: Path) -> None:
    store = ActionStore(tmp_path / "apply")
    assert store.start(4)
    assert not store.start(4)
    store.report(4, "received", "ok")
    sent = store.pending(200)
    store.report(4, "check", "ok")
    store.confirm(sent)
    again = ActionStore(tmp_path / "apply")
    assert again.is_started(4) and again.unfinished() == [4]
    assert [(r["seq"], r["step"]) for r in again.pending(200)] == [(2, "check")]
    again.report(4, "outcome", "verified")
    assert ActionStore(tmp_path / "apply").unfinished() == []
    assert (tmp_path / "apply" / "actions.json").stat().st_mode & 0o777 == 0o600


def test_step_reports_are_timed_to_the_millisecond(tmp_path: Path) -> None:
    before = datetime.now(UTC)
    report = ActionStore(tmp_path / "apply").report(4, "received", "ok")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", report["at"])
    at = datetime.fromisoformat(report["at"])
    assert before - timedelta(milliseconds=1) <= at <= datetime.now(UTC)


def test_apply_settings(tmp_path: Path) -> None:
    config = load_config(env={}, path=_toml(tmp_path, ""))
    assert config.allow_apply is False
    assert config.apply_verify_s == 3.0
    assert config.apply_dir == config.state_dir / "apply"
    config = load_config(path=_toml(tmp_path, "allow_apply = true\napply_verify_s = 5\n"), env={})
    assert config.allow_apply is True and config.apply_verify_s == 5.0
    with pytest.raises(ConfigError, match="apply_verify_s"):
        load_config(path=_toml(tmp_path, "apply_verify_s = 0\n"), env={})
    env = {"NGINX_FLEET_AGENT_ALLOW_APPLY": "yes"}
    assert load_config(path=_toml(tmp_path, ""), env=env).allow_apply is True


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(text)
    return path
