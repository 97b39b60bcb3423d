"""`nginx-fleet analyze`: JSON and text output, exit codes 0/1/2, stdin."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from nginx_fleet_analyzer.cli import main

CLEAN_ENOUGH = "events {}\nhttp {\n  server { listen 80; }\n}\n"
BROKEN = "events {\n  worker_processes 2;\n}\n"


def test_json_output_and_exit_1_on_error_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nginx.conf"
    path.write_text(BROKEN)
    assert main([str(path)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out["score"], int) and "validity" in out["categories"]
    hit = [f for f in out["findings"] if f["rule"] == "V-context"]
    assert hit[0]["file"] == str(path) and hit[0]["line"] == 2 and hit[0]["severity"] == "error"


def test_exit_0_without_error_findings_and_text_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nginx.conf"
    path.write_text(CLEAN_ENOUGH)
    assert main([str(path), "--format", "text", "--nginx-version", "1.22.1"]) == 0
    out = capsys.readouterr().out
    assert "score " in out and "/100" in out


def test_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BROKEN.encode())))
    assert main(["-"]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["file"] == "stdin"


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main([str(tmp_path / "missing.conf")]) == 2
    assert main([str(tmp_path), "--nginx-version", "latest"]) == 2
    assert "not a version" in capsys.readouterr().err
