"""`nginx -T` dumps: sections, stderr noise, include resolution in glob order."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from nginx_fleet_analyzer.dump import split_dump
from nginx_fleet_analyzer.loader import parse_dump, parse_path

DUMP = """nginx: the configuration file /etc/nginx/nginx.conf syntax is ok
nginx: configuration file /etc/nginx/nginx.conf test is successful
# configuration file /etc/nginx/nginx.conf:
events {}
http {
    include conf.d/*.conf;
    server { listen 80; include snippets/common.conf; }
    server { listen 81; include snippets/common.conf; }
}

# configuration file /etc/nginx/conf.d/b.conf:
server { listen 8002; }
# configuration file /etc/nginx/conf.d/a.conf:
server { listen 8001; }

# configuration file /etc/nginx/snippets/common.conf:
add_header X-Common 1;

"""


def test_sections_drop_stderr_and_the_newline_nginx_adds() -> None:
    sections = split_dump(DUMP)
    assert [path for path, _ in sections] == [
        "/etc/nginx/nginx.conf",
        "/etc/nginx/conf.d/b.conf",
        "/etc/nginx/conf.d/a.conf",
        "/etc/nginx/snippets/common.conf",
    ]
    assert dict(sections)["/etc/nginx/conf.d/b.conf"] == "server { listen 8002; }"
    assert dict(sections)["/etc/nginx/nginx.conf"].endswith("}\n")


def test_includes_resolve_in_sorted_glob_order_in_place() -> None:
    config = parse_dump(DUMP)
    http = config.http()
    assert http is not None
    body = http.block or []
    assert [d.name for d in body] == ["include", "server", "server", "server", "server"]
    listens = [s.child("listen") for s in config.servers()]
    assert [lst.args[0] for lst in listens if lst is not None] == ["8001", "8002", "80", "81"]
    first_included = body[1]
    assert first_included.file == "/etc/nginx/conf.d/a.conf" and first_included.line == 1
    assert first_included.via is body[0] and first_included.parent is http


def test_a_file_included_twice_appears_under_each_includer() -> None:
    config = parse_dump(DUMP)
    headers = config.find("add_header")
    assert [h.parent.child("listen").args for h in headers if h.parent] == [["80"], ["81"]]  # type: ignore[union-attr]
    assert all(h.file == "/etc/nginx/snippets/common.conf" for h in headers)


def test_missing_plain_include_is_noted_not_a_parse_error() -> None:
    dump = "# configuration file /etc/nginx/nginx.conf:\ninclude /etc/nginx/gone.conf;\n\n"
    config = parse_dump(dump)
    assert config.errors == [] and config.from_dump
    [missing] = config.unresolved
    assert missing.include.line == 1 and missing.include.args == ["/etc/nginx/gone.conf"]
    assert missing.reason == "not in the dump"


def test_glob_include_matching_nothing_in_a_dump_is_legal() -> None:
    dump = "# configuration file /etc/nginx/nginx.conf:\nhttp { include conf.d/*.conf; }\n\n"
    assert parse_dump(dump).unresolved == []


def test_include_loop_is_an_error_not_a_hang() -> None:
    dump = (
        "# configuration file /etc/nginx/nginx.conf:\ninclude a.conf;\n\n"
        "# configuration file /etc/nginx/a.conf:\ninclude nginx.conf;\n\n"
    )
    config = parse_dump(dump)
    assert any("loop" in e.message for e in config.errors)


@pytest.mark.skipif(
    shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists(), reason="needs nginx"
)
def test_real_nginx_dump_parses_to_the_same_files(tmp_path: Path) -> None:
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "site.conf").write_text("server { listen 127.0.0.1:1; return 204; }")
    main = tmp_path / "nginx.conf"
    main.write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  client_body_temp_path {tmp_path};\n"
        f"  proxy_temp_path {tmp_path};\n  fastcgi_temp_path {tmp_path};\n"
        f"  uwsgi_temp_path {tmp_path};\n  scgi_temp_path {tmp_path};\n"
        "  include conf.d/*.conf;\n}\n"
    )
    result = subprocess.run(
        ["/usr/sbin/nginx", "-T", "-p", str(tmp_path), "-c", str(main)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    dump_file = tmp_path / "dump.txt"
    dump_file.write_text(result.stderr + result.stdout)
    config = parse_path(dump_file)
    assert list(config.files) == [str(main), str(tmp_path / "conf.d" / "site.conf")]
    assert config.files[str(main)].text == main.read_text()
    [server] = config.servers()
    assert server.file.endswith("site.conf") and config.errors == []


def test_single_file_on_disk_reads_its_includes(tmp_path: Path) -> None:
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "one.conf").write_text("server { listen 1; }\n")
    (tmp_path / "sites" / ".hidden.conf").write_text("server { listen 2; }\n")
    main = tmp_path / "nginx.conf"
    main.write_text("http { include sites/*.conf; }\n")
    config = parse_path(main)
    assert [s.child("listen").args for s in config.servers()] == [["1"]]  # type: ignore[union-attr]
