"""The security rules' verdicts checked against a real nginx serving the same configuration.

Each case pairs what the analyzer says about a block with what nginx (Debian's package) does
with a crafted request: a traversal that reads a file outside the alias, an allow list that lets
everyone in, headers that are or are not sent, a redirect that carries an injected header line.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nginx_fleet_analyzer.findings import Finding
from nginx_fleet_analyzer.loader import parse_text
from nginx_fleet_analyzer.rules import RuleContext, get_rule

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
pytestmark = pytest.mark.skipif(not os.path.exists(NGINX), reason="nginx is not installed")

CONFIG = """{user}pid {root}/nginx.pid;
error_log {root}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {root}/tmp;
    proxy_temp_path {root}/tmp;
    fastcgi_temp_path {root}/tmp;
    uwsgi_temp_path {root}/tmp;
    scgi_temp_path {root}/tmp;
    server {{
        listen 127.0.0.1:{port};
        add_header Strict-Transport-Security "max-age=60" always;
        add_header X-Frame-Options DENY always;
        location /static {{
            alias {root}/www/static/;
        }}
        location ~ ^/media(.*)$ {{
            alias {root}/www/static/$1;
        }}
        location /nested/ {{
            alias {root}/www/static/;
            location /nested/in {{
            }}
        }}
        location /embed/ {{
            add_header X-Frame-Options "";
            return 200 "embed";
        }}
        location /split/ {{
            return 302 https://example.test$uri;
        }}
        location /safe/ {{
            return 302 https://example.test$request_uri;
        }}
        location /moved/ {{
            rewrite ^/moved/([^/]*)$ https://example.test/$1 redirect;
        }}
        location ~ ^/gone/([^/]*)$ {{
            return 302 https://example.test/$1;
        }}
        location /preflight {{
            add_header Content-Type text/plain;
            return 204;
        }}
        location /typed {{
            add_header Content-Type text/plain;
            return 200 "typed";
        }}
        location ~ ^/user/([^/]+)/ {{
            proxy_pass http://127.0.0.1:{upstream}/profile/$1;
        }}
    }}
    server {{
        listen 127.0.0.1:{port2};
        root {root}/www;
        deny all;
        location /open/ {{
            allow 10.255.255.1;
        }}
        location /closed/ {{
        }}
        location /staff/ {{
            satisfy any;
            allow 10.255.255.1;
            auth_basic "staff";
            auth_basic_user_file {root}/htpasswd;
        }}
    }}
}}
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Served:
    """A running nginx and the analyzer's findings on its configuration."""

    def __init__(self, root: Path, text: str, port: int, port2: int, upstream: int) -> None:
        self.root = root
        self.text = text
        self.port = port
        self.port2 = port2
        self.upstream = upstream

    def findings(self, rule_id: str) -> list[Finding]:
        """The findings of one rule on the served configuration."""
        context = RuleContext(config=parse_text(self.text))
        return list(get_rule(rule_id).check(context))

    def line_of(self, snippet: str) -> int:
        """The line of the configuration that contains snippet."""
        return next(n for n, line in enumerate(self.text.splitlines(), 1) if snippet in line)

    def get(self, path: str, port: int | None = None) -> bytes:
        """The raw response to a GET of path sent exactly as written (no normalisation)."""
        with socket.create_connection(("127.0.0.1", port or self.port), timeout=5) as conn:
            conn.sendall(f"GET {path} HTTP/1.0\r\nHost: t\r\n\r\n".encode())
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("nginx")
    for folder in ("www/static", "www/secret", "www/open", "www/closed", "www/staff", "tmp"):
        (root / folder).mkdir(parents=True)
    (root / "www/static/a.txt").write_text("public\n")
    (root / "www/secret/key.txt").write_text("TOP-SECRET\n")
    for folder in ("open", "closed", "staff"):
        (root / f"www/{folder}/i.txt").write_text(f"{folder}\n")
    (root / "htpasswd").write_text("nobody:$apr1$invalid$invalid\n")
    port, port2, upstream = _free_port(), _free_port(), _free_port()
    # Workers of a root master run as nobody and could not read the temporary directory.
    user = "user root;\n" if os.geteuid() == 0 else ""
    text = CONFIG.format(user=user, root=root, port=port, port2=port2, upstream=upstream)
    (root / "nginx.conf").write_text(text)
    started = subprocess.run(
        [NGINX, "-p", str(root), "-c", str(root / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    pid = 0
    for _ in range(50):
        if (root / "nginx.pid").exists() and (content := (root / "nginx.pid").read_text()):
            pid = int(content)
            break
        time.sleep(0.1)
    assert pid
    try:
        yield Served(root, text, port, port2, upstream)
    finally:
        os.kill(pid, signal.SIGQUIT)


def test_prefix_alias_without_slash_is_reported_and_nginx_leaks(served: Served) -> None:
    line = served.line_of("location /static")
    [finding] = [f for f in served.findings("X-alias-traversal") if f.line == line]
    assert finding.severity == "error"
    assert b"TOP-SECRET" in served.get("/static../secret/key.txt")


def test_regex_alias_capture_after_no_slash_is_reported_and_nginx_leaks(served: Served) -> None:
    line = served.line_of("location ~ ^/media")
    [finding] = [f for f in served.findings("X-alias-traversal") if f.line == line]
    assert finding.severity == "error"
    assert b"TOP-SECRET" in served.get("/media../secret/key.txt")
    assert b"public" in served.get("/media/a.txt")


def test_nested_location_inheriting_alias_is_silent_and_nginx_holds(served: Served) -> None:
    lines = {f.line for f in served.findings("X-alias-traversal")}
    assert lines == {served.line_of("location /static"), served.line_of("location ~ ^/media")}
    response = served.get("/nested/in../secret/key.txt")
    assert b"TOP-SECRET" not in response
    assert response.startswith(b"HTTP/1.1 404")


def test_allow_without_deny_under_a_parent_deny_all_lets_everyone_in(served: Served) -> None:
    [finding] = served.findings("X-allow-without-deny")
    assert finding.line == served.line_of("allow 10.255.255.1;")
    assert served.get("/open/i.txt", served.port2).startswith(b"HTTP/1.1 200")
    # The server's deny all holds where the location has no rules of its own.
    assert served.get("/closed/i.txt", served.port2).startswith(b"HTTP/1.1 403")
    # satisfy any + auth_basic: not reported, and nginx asks for a password.
    assert served.get("/staff/i.txt", served.port2).startswith(b"HTTP/1.1 401")


def test_blank_add_header_drops_the_parent_list(served: Served) -> None:
    [finding] = served.findings("X-add-header-inherit")
    blocks = finding.evidence["blocks"]
    assert isinstance(blocks, list)
    [embed] = [b for b in blocks if b["block"] == "location /embed/"]
    assert embed["dropped"] == ["Strict-Transport-Security"]
    response = served.get("/embed/")
    assert b"Strict-Transport-Security" not in response
    assert b"X-Frame-Options" not in response
    assert b"Strict-Transport-Security" in served.get("/split/x")


def test_uri_in_redirect_splits_the_response_and_request_uri_does_not(served: Served) -> None:
    lines = {f.line: f for f in served.findings("X-http-splitting")}
    assert lines[served.line_of("example.test$uri")].severity == "error"
    split = served.get("/split/%0d%0aSet-Cookie:%20taken=1")
    assert b"\r\nSet-Cookie: taken=1\r\n" in split
    safe = served.get("/safe/%0d%0aSet-Cookie:%20taken=1")
    assert b"\r\nSet-Cookie" not in safe


def test_content_type_is_doubled_except_on_204(served: Served) -> None:
    [finding] = served.findings("X-add-header-content-type")
    assert finding.line == served.line_of("add_header Content-Type") + 4
    typed = served.get("/typed").lower()
    assert typed.count(b"\r\ncontent-type:") == 2
    preflight = served.get("/preflight").lower()
    assert preflight.count(b"\r\ncontent-type:") == 1


def test_capture_with_lf_splits_the_upstream_request(served: Served) -> None:
    lines = {f.line: f for f in served.findings("X-http-splitting")}
    assert lines[served.line_of("/profile/$1")].severity == "error"
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", served.upstream))
        listener.listen(1)
        listener.settimeout(5)
        with socket.create_connection(("127.0.0.1", served.port), timeout=5) as client:
            client.sendall(b"GET /user/a%0aX-Injected:%20yes/ HTTP/1.0\r\nHost: t\r\n\r\n")
            upstream, _ = listener.accept()
            with upstream:
                upstream.settimeout(5)
                received = upstream.recv(65536)
    assert received.startswith(b"GET /profile/a\nX-Injected: yes HTTP/1.0\r\n")


def test_rewrite_escapes_its_captures_and_return_does_not(served: Served) -> None:
    lines = {f.line for f in served.findings("X-http-splitting")}
    assert served.line_of("rewrite ^/moved/") not in lines
    assert served.line_of("example.test/$1;") in lines
    moved = served.get("/moved/a%0d%0aSet-Cookie:%20taken=1")
    assert b"Location: https://example.test/a%0D%0ASet-Cookie" in moved
    gone = served.get("/gone/a%0d%0aSet-Cookie:%20taken=1")
    assert b"\r\nSet-Cookie: taken=1\r\n" in gone
