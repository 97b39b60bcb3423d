"""`nginx-fleet analyze`: JSON, text and SARIF output, filters, exit codes 0/1/2, facts, stdin."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from nginx_fleet_analyzer.cli import main, parse_memory

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


SITE = """\
server {
    listen 443 ssl;
    server_name shop.example.net;
    ssl_certificate /etc/ssl/shop.pem;
    ssl_certificate_key /etc/ssl/shop.key;
    ssl_protocols TLSv1 TLSv1.2;
    include snippets/headers.conf;
    location / {
        proxy_pass http://127.0.0.1:3000;
    }
    send_timeout 2s;
}
"""
WORKERS = "worker_processes 2;\nevents { worker_connections 4096; }\nhttp {\n}\n"


def _run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def _write(tmp_path: Path, text: str, name: str = "site.conf") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_site_file_alone_reports_its_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run_json([_write(tmp_path, SITE)], capsys)
    assert out["context"] == "http" and out["partial"] is True
    rules = {f["rule"] for f in out["findings"]}
    assert "V-context" not in rules and "S-protocols" in rules
    # The TLSv1 line is a real error, so the default --fail-on error fails.
    assert code == 1
    code, out = _run_json([_write(tmp_path, SITE), "--context", "main"], capsys)
    assert out["context"] == "main" and "V-context" in {f["rule"] for f in out["findings"]}


def test_text_format_says_the_file_was_read_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main([_write(tmp_path, SITE), "--format", "text"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith(
        "read alone, as if included in http context (the nginx.conf that includes it is not "
        "analysed)"
    )
    assert ":6: error S-protocols:" in out
    assert ":7: info V-unknown:" in out


def test_min_severity_filters_findings_but_not_the_score_or_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, SITE)
    code_all, everything = _run_json([path], capsys)
    code_err, errors = _run_json([path, "--min-severity", "error"], capsys)
    _, warnings = _run_json([path, "--min-severity", "warning"], capsys)
    assert {f["severity"] for f in everything["findings"]} >= {"info", "error"}
    assert {f["severity"] for f in errors["findings"]} == {"error"}
    assert "info" not in {f["severity"] for f in warnings["findings"]}
    assert len(errors["findings"]) < len(warnings["findings"]) < len(everything["findings"])
    assert errors["score"] == everything["score"] and errors["counts"] == everything["counts"]
    assert code_all == code_err == 1


def test_fail_on_sets_the_exit_threshold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Warnings only (W-nofile, G-off...), no error.
    path = _write(tmp_path, "events {}\nhttp {\n    server { listen 80; root /srv; }\n}\n")
    assert main([path]) == 0
    assert main([path, "--fail-on", "warning"]) == 1
    assert main([path, "--fail-on", "info"]) == 1
    capsys.readouterr()
    # --fail-on counts findings that --min-severity hides.
    code, out = _run_json([path, "--fail-on", "warning", "--min-severity", "error"], capsys)
    assert code == 1 and out["findings"] == [] and out["counts"]["warning"] > 0


def test_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out and "2  usage error" in out and "--fail-on" in out


def test_usage_and_read_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, WORKERS)
    bad_json = _write(tmp_path, "{not json", "facts.json")
    a_list = _write(tmp_path, "[1, 2]", "list.json")
    assert main([path, "--facts", bad_json]) == 2
    assert main([path, "--facts", a_list]) == 2
    assert main([path, "--facts", str(tmp_path / "none.json")]) == 2
    assert main([path, "--memory", "lots"]) == 2
    assert main([path, "--cpus", "0"]) == 2
    assert main([path, "--context", "upstream"]) == 2
    assert main([path, "--format", "xml"]) == 2
    err = capsys.readouterr().err
    assert "not a JSON object" in err and "not a memory size" in err


def _severity_of(out: dict[str, Any], rule: str) -> str | None:
    found = [f["severity"] for f in out["findings"] if f["rule"] == rule]
    return found[0] if found else None


def test_cpus_option_reaches_the_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, WORKERS, "nginx.conf")
    _, without = _run_json([path], capsys)
    _, with_cpus = _run_json([path, "--cpus", "8"], capsys)
    _, with_two = _run_json([path, "--cpus", "2"], capsys)
    assert _severity_of(without, "W-processes") in (None, "info")
    assert _severity_of(with_cpus, "W-processes") == "warning"
    assert _severity_of(with_two, "W-processes") is None


def test_facts_file_as_the_agent_sends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, WORKERS, "nginx.conf")
    push = {
        "agent_id": "a1",
        "facts": {"cpu_count": 8, "nginx_version": "1.22.1", "mem_total_bytes": 8 * 1024**3},
        "samples": [
            {"seq": 1, "nginx_processes": {"worker_fds_limit": 4096}},
            {"seq": 2, "nginx_processes": {"worker_fds_limit": 1024}},
            {"seq": 3, "nginx_processes": None},
        ],
    }
    facts = _write(tmp_path, json.dumps(push), "facts.json")
    _, out = _run_json([path, "--facts", facts], capsys)
    assert _severity_of(out, "W-processes") == "warning"
    nofile = [f for f in out["findings"] if f["rule"] == "W-nofile"]
    assert nofile and "1024" in nofile[0]["message"]
    # A flag overrides the file: 2 CPUs and 2 workers are fine.
    _, out = _run_json([path, "--facts", facts, "--cpus", "2"], capsys)
    assert _severity_of(out, "W-processes") is None


def test_nofile_and_memory_options_reach_the_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, WORKERS, "nginx.conf")
    _, low = _run_json([path, "--nofile", "1024"], capsys)
    _, high = _run_json([path, "--nofile", "65535"], capsys)
    low_nofile = [f for f in low["findings"] if f["rule"] == "W-nofile"]
    assert low_nofile and "1024" in low_nofile[0]["message"]
    assert not any("65535" in f["message"] for f in high["findings"] if f["rule"] == "W-nofile")
    big_buffers = (
        "worker_processes 4;\nevents { worker_connections 8192; }\n"
        "http {\n    proxy_buffers 64 64k;\n    server { listen 80;\n"
        "        location / { proxy_pass http://127.0.0.1:9; } }\n}\n"
    )
    buffers = _write(tmp_path, big_buffers, "buffers.conf")
    _, small_host = _run_json([buffers, "--memory", "512M", "--cpus", "4"], capsys)
    _, big_host = _run_json([buffers, "--memory", "1T", "--cpus", "4"], capsys)
    assert _severity_of(small_host, "B-proxy-memory") == "warning"
    assert _severity_of(big_host, "B-proxy-memory") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4G", 4 * 1024**3), ("512M", 512 * 1024**2), ("2GiB", 2 * 1024**3), ("1024", 1024)],
)
def test_memory_sizes(text: str, expected: int) -> None:
    assert parse_memory(text) == expected


# The fields SARIF 2.1.0 requires (OASIS SARIF v2.1.0, sections 3.13-3.52), and the value
# ranges of the ones we fill, written out as a JSON schema.
SARIF_REQUIRED = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "rules": {"type": "array", "items": {"$ref": "#/$defs/rule"}}
                                },
                            }
                        },
                    },
                    "results": {"type": "array", "items": {"$ref": "#/$defs/result"}},
                },
            },
        },
    },
    "$defs": {
        "level": {"enum": ["none", "note", "warning", "error"]},
        "message": {
            "type": "object",
            "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
        },
        "rule": {
            "type": "object",
            "required": ["id", "shortDescription", "helpUri", "defaultConfiguration"],
            "properties": {
                "id": {"type": "string"},
                "shortDescription": {"$ref": "#/$defs/message"},
                "helpUri": {"type": "string", "pattern": "^https://"},
                "defaultConfiguration": {
                    "type": "object",
                    "required": ["level"],
                    "properties": {"level": {"$ref": "#/$defs/level"}},
                },
            },
        },
        "result": {
            "type": "object",
            "required": ["message", "ruleId", "level", "locations", "partialFingerprints"],
            "properties": {
                "message": {"$ref": "#/$defs/message"},
                "level": {"$ref": "#/$defs/level"},
                "ruleIndex": {"type": "integer", "minimum": 0},
                "partialFingerprints": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                },
                "locations": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["physicalLocation"],
                        "properties": {
                            "physicalLocation": {
                                "type": "object",
                                "required": ["artifactLocation", "region"],
                                "properties": {
                                    "artifactLocation": {
                                        "type": "object",
                                        "required": ["uri"],
                                        "properties": {"uri": {"type": "string", "minLength": 1}},
                                    },
                                    "region": {
                                        "type": "object",
                                        "required": ["startLine", "startColumn"],
                                        "properties": {
                                            "startLine": {"type": "integer", "minimum": 1},
                                            "startColumn": {"type": "integer", "minimum": 1},
                                        },
                                    },
                                },
                            }
                        },
                    },
                },
            },
        },
    },
}


def _sarif(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main([*argv, "--format", "sarif"])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def test_sarif_has_every_required_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    document = _sarif([_write(tmp_path, SITE)], capsys)
    validator = jsonschema_rs.validator_for(SARIF_REQUIRED)
    errors = [str(e) for e in validator.iter_errors(document)]
    assert errors == []
    # The checker itself rejects a broken log, so the test above can fail.
    document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"] = {
        "startLine": 0
    }
    assert list(validator.iter_errors(document))


def test_sarif_places_findings_at_their_lines_and_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, SITE)
    run = _sarif([path], capsys)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    [protocols] = [r for r in run["results"] if r["ruleId"] == "S-protocols"]
    assert protocols["level"] == "error"
    location = protocols["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "file://" + path
    assert location["region"] == {"startLine": 6, "startColumn": 5}
    assert rules[protocols["ruleIndex"]]["id"] == "S-protocols"
    assert rules[protocols["ruleIndex"]]["helpUri"].startswith("https://nginx.org/")
    key = protocols["partialFingerprints"]["nginxFleetFindingKey/v1"]
    assert key.startswith("S-protocols@")
    [note] = [r for r in run["results"] if r["ruleId"] == "V-unknown"]
    assert (
        note["level"] == "note"
        and note["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    )
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)) and {"V-args", "S-protocols", "W-processes"} <= set(ids)


def test_sarif_relative_paths_stay_relative_and_min_severity_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "shop.conf").write_text(SITE)
    run = _sarif(["sites/shop.conf", "--min-severity", "error"], capsys)["runs"][0]
    assert {r["level"] for r in run["results"]} == {"error"}
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {"sites/shop.conf"}


def test_console_entry_flushes_everything_before_its_fast_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = "".join(
        f"    server {{ listen 443 ssl; server_name s{n}.example.net; "
        f"ssl_certificate /c.pem; ssl_certificate_key /c.key; ssl_protocols TLSv1; }}\n"
        for n in range(300)
    )
    path = _write(tmp_path, "events {}\nhttp {\n" + servers + "}\n", "many.conf")
    done = subprocess.run(
        [sys.executable, "-m", "nginx_fleet_analyzer.cli", path, "--format", "sarif"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert main([path, "--format", "sarif"]) == 1
    assert done.stdout == capsys.readouterr().out
    assert len(done.stdout) > 64 * 1024  # more than a pipe buffer holds
    usage = subprocess.run(
        [sys.executable, "-m", "nginx_fleet_analyzer.cli", str(tmp_path / "missing.conf")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert usage.returncode == 2 and "cannot read" in usage.stderr


# Standard modules a CLI run on a usual config must not import: each costs every run of a CI
# check 1-20 ms (bench/README.md, whole_process.py). urllib.parse and ipaddress are imported only
# for Origin/Referer regexes and IP-literal addresses, ssl never (the _ssl C module suffices).
_HEAVY_MODULES = frozenset(
    {
        "contextlib",
        "dataclasses",
        "hashlib",
        "inspect",
        "ipaddress",
        "logging",
        "pathlib",
        "shutil",
        "ssl",
        "typing",
        "urllib.parse",
        "weakref",
    }
)
_USUAL_CONFIG = """events { worker_connections 1024; }
http {
    gzip on;
    ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256;
    upstream app { server 127.0.0.1:8000; keepalive 16; }
    server {
        listen 443 ssl;
        listen [::]:443 ssl;
        server_name shop.example.com;
        ssl_certificate /etc/ssl/shop.pem;
        ssl_certificate_key /etc/ssl/shop.key;
        add_header Strict-Transport-Security "max-age=31536000" always;
        root /srv/shop;
        location ~* \\.(css|js|png)$ { expires 30d; }
        location /api/ { proxy_pass http://app; }
    }
    server { listen 80; listen [::]:80; return 301 https://$host$request_uri; }
}
"""


def test_a_cli_run_imports_no_heavy_module(tmp_path: Path) -> None:
    path = _write(tmp_path, _USUAL_CONFIG, "nginx.conf")
    probe = (
        "import io, sys\n"
        "from nginx_fleet_analyzer.cli import main\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        f"main([{path!r}])\n"
        "out.write(' '.join(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    imported = set(done.stdout.split())
    assert "_ssl" in imported  # the cipher string was expanded
    assert "nginx_fleet_analyzer.rules.security_origins" in imported  # every rule ran
    assert imported & _HEAVY_MODULES == set()
