"""The agent's wheel served by the control plane: its bytes, its SHA-256, and pip checking it."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from app.auth.cookies import CSRF_COOKIE, CSRF_HEADER
from app.core.config import Settings
from app.main import create_app
from app.users.models import Role
from fastapi.testclient import TestClient

from tests.conftest import TEST_PASSWORD, MakeUser, SignedInClient
from tests.core.processes import NGINX_FLEET, free_port, wait_until_healthy

REPO_ROOT = Path(__file__).resolve().parents[3]
TOKENS = "/api/v1/enrollment-tokens"


@pytest.fixture(scope="session")
def wheel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The agent's wheel built the way `make build` builds it, in a directory of its own."""
    uv = shutil.which("uv")
    assert uv is not None, "uv is needed to build the agent wheel (make install-python)"
    out = tmp_path_factory.mktemp("downloads")
    subprocess.run(
        [uv, "build", "--wheel", "--package", "nginx-fleet-agent", "--out-dir", str(out)],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out


@pytest.fixture
def serving(settings: Settings, wheel_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the app at the built wheel; return the wheel's path."""
    monkeypatch.setattr(settings, "downloads_dir", wheel_dir)
    (wheel,) = wheel_dir.glob("*.whl")
    return wheel


def test_the_served_wheel_is_the_one_whose_sha256_the_api_reports(
    serving: Path, admin_client: SignedInClient, client: TestClient
) -> None:
    created = admin_client.post(TOKENS, json={}).json()
    wheel = created["agent_wheel"]
    assert wheel["filename"] == serving.name
    assert wheel["url"] == f"http://testserver/downloads/{serving.name}"

    # Public: an nginx host fetches it without a session.
    reply = client.get(f"/downloads/{serving.name}")

    assert reply.status_code == 200
    assert reply.content == serving.read_bytes()
    assert hashlib.sha256(reply.content).hexdigest() == wheel["sha256"]
    assert wheel["size_bytes"] == len(reply.content)
    # curl -I and mirrors ask first.
    head = client.head(f"/downloads/{serving.name}")
    assert head.status_code == 200
    assert int(head.headers["content-length"]) == len(reply.content)
    assert f"{wheel['url']}#sha256={wheel['sha256']}" in created["install_command"]
    assert "pip install nginx-fleet-agent" not in created["install_command"]


@pytest.fixture
def ui_and_wheel(
    serving: Path, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    """The app with a built UI too, whose index.html would answer any unknown path."""
    (tmp_path / "index.html").write_text("<html>fleet</html>")
    (serving.parent / "notes.txt").write_text("not a download")
    monkeypatch.setattr(settings, "ui_dir", tmp_path)
    return TestClient(create_app())


@pytest.mark.parametrize(
    "path",
    [
        "/downloads/nope",
        "/downloads/nginx_fleet_agent-9.9.9-py3-none-any.whl",
        "/downloads/notes.txt",
        "/downloads/",
        "/downloads",
        "/downloads/a/b",
    ],
)
def test_anything_else_under_downloads_is_404_not_the_ui(
    ui_and_wheel: TestClient, path: str
) -> None:
    reply = ui_and_wheel.get(path)
    assert reply.status_code == 404
    assert "fleet</html>" not in reply.text
    assert reply.json()["detail"]
    assert ui_and_wheel.get("/hosts/1").text == "<html>fleet</html>"


def test_without_a_built_wheel_there_is_no_install_command(
    admin_client: SignedInClient, client: TestClient
) -> None:
    created = admin_client.post(TOKENS, json={}).json()
    assert created["agent_wheel"] is None
    assert created["install_command"] is None
    assert client.get("/downloads/nginx_fleet_agent-0.1.0-py3-none-any.whl").status_code == 404


@pytest.fixture
def api_serving_wheel(wheel_dir: Path, tmp_path: Path) -> Iterator[str]:
    """A real `nginx-fleet api` on a free loopback port, offering the built wheel."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "NGINX_FLEET_DOWNLOADS_DIR": str(wheel_dir)}
    with (tmp_path / "api.log").open("wb") as log:
        server = subprocess.Popen(
            [NGINX_FLEET, "api", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(url, server, timeout_s=60)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def wheel_argument(install_command: str, server_url: str) -> str:
    """The `URL#sha256=...` that the page's command hands to pip."""
    words = shlex.split(install_command.replace("&&", " "))
    (argument,) = [word for word in words if word.startswith(f"{server_url}/downloads/")]
    return argument


def test_pip_installs_the_served_wheel_and_refuses_one_with_another_hash(
    api_serving_wheel: str, make_user: MakeUser, tmp_path: Path
) -> None:
    admin = make_user(role=Role.admin)
    with httpx.Client(base_url=api_serving_wheel, timeout=30) as browser:
        login = {"username": admin.username, "password": TEST_PASSWORD}
        assert browser.post("/api/v1/auth/login", json=login).status_code == 200
        browser.headers[CSRF_HEADER] = browser.cookies[CSRF_COOKIE]
        created = browser.post(TOKENS, json={}).json()
    argument = wheel_argument(created["install_command"], api_serving_wheel)
    assert argument.endswith(f"#sha256={created['agent_wheel']['sha256']}")

    venv = tmp_path / "agent-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # Only the agent comes from the server; its dependencies (httpx, ...) are taken from this
    # environment below, so the test needs no package index.
    pip = [str(venv / "bin" / "pip"), "install", "--no-deps", "--no-index", "--no-cache-dir"]
    tampered = argument.rsplit("=", 1)[0] + "=" + "0" * 64
    refused = subprocess.run(
        [*pip, tampered], capture_output=True, text=True, timeout=120, check=False
    )
    assert refused.returncode != 0
    assert "DO NOT MATCH THE HASHES" in refused.stdout + refused.stderr
    assert not (venv / "bin" / "nginx-fleet-agent").exists()

    installed = subprocess.run(
        [*pip, argument], capture_output=True, text=True, timeout=120, check=False
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    helped = subprocess.run(
        [str(venv / "bin" / "nginx-fleet-agent"), "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert helped.returncode == 0, helped.stderr
    assert "enroll" in helped.stdout
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import nginx_fleet_agent; print(nginx_fleet_agent.__file__)",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert where.stdout.startswith(str(venv))
