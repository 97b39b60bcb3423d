"""Serving the built UI with the single-page fallback."""

from __future__ import annotations

from pathlib import Path

import pytest
from app.core.config import Settings
from app.main import create_app
from fastapi.testclient import TestClient


@pytest.fixture
def ui_client(settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TestClient:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<html>fleet</html>")
    (tmp_path / "assets" / "app-1a2b.js").write_text("console.log(1)")
    (tmp_path.parent / "secret.txt").write_text("outside the UI dir")
    monkeypatch.setattr(settings, "ui_dir", tmp_path)
    return TestClient(create_app())


def test_index_and_assets_are_served(ui_client: TestClient) -> None:
    index = ui_client.get("/")
    assert index.status_code == 200
    assert index.text == "<html>fleet</html>"
    assert "default-src 'self'" in index.headers["content-security-policy"]
    asset = ui_client.get("/assets/app-1a2b.js")
    assert asset.text == "console.log(1)"
    assert "immutable" in asset.headers["cache-control"]


def test_client_routes_fall_back_to_index(ui_client: TestClient) -> None:
    reply = ui_client.get("/hosts/12/config")
    assert reply.status_code == 200
    assert reply.text == "<html>fleet</html>"


def test_unknown_api_paths_stay_404(ui_client: TestClient) -> None:
    reply = ui_client.get("/api/v1/no-such-thing")
    assert reply.status_code == 404
    assert reply.json()["detail"] == "no API route /api/v1/no-such-thing"
    assert ui_client.get("/api/v1/health").json()["status"] == "ok"


def test_paths_cannot_escape_the_ui_dir(ui_client: TestClient) -> None:
    reply = ui_client.get("/..%2fsecret.txt")
    assert "outside the UI dir" not in reply.text
