"""Settings: defaults, derived URLs and the production refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from app.core.config import Settings
from pydantic import ValidationError

EMBEDDED_ENV = ("DATABASE_URL", "REDIS_URL", "NGINX_FLEET_ENV", "NGINX_FLEET_ADMIN_PASSWORD")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in EMBEDDED_ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_embedded_defaults(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.is_embedded
    assert settings.mode == "embedded"
    assert settings.effective_database_url == f"sqlite:///{tmp_path.resolve()}/nginx-fleet.db"
    assert settings.celery_broker_url == f"sqla+sqlite:///{tmp_path.resolve()}/celery-broker.db"
    assert settings.ingest_max_bytes == 2 * 1024 * 1024
    assert (settings.push_interval_s, settings.session_ttl_hours) == (10, 12)


def test_environment_variables_are_read(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("DATABASE_URL", "postgresql://u@db:5432/fleet")
    clean_env.setenv("REDIS_URL", "redis://cache:6379/0")
    clean_env.setenv("INGEST_MAX_BYTES", "1024")
    settings = Settings()
    assert settings.effective_database_url == "postgresql+psycopg://u@db:5432/fleet"
    assert settings.celery_broker_url == "redis://cache:6379/0"
    assert settings.mode == "production"
    assert settings.ingest_max_bytes == 1024


def test_production_requires_an_admin_password(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("NGINX_FLEET_ENV", "production")
    with pytest.raises(ValidationError, match="NGINX_FLEET_ADMIN_PASSWORD must be set"):
        Settings()


@pytest.mark.parametrize("password", ["short", "changeme", "CHANGEME"])
def test_production_refuses_weak_admin_passwords(
    clean_env: pytest.MonkeyPatch, password: str
) -> None:
    clean_env.setenv("NGINX_FLEET_ENV", "production")
    clean_env.setenv("NGINX_FLEET_ADMIN_PASSWORD", password)
    with pytest.raises(ValidationError, match="too weak"):
        Settings()


def test_production_accepts_a_real_password(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("NGINX_FLEET_ENV", "production")
    clean_env.setenv("NGINX_FLEET_ADMIN_PASSWORD", "a properly long secret")
    assert Settings().is_production


def test_invalid_values_are_refused(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("NGINX_FLEET_ENV", "staging")
    with pytest.raises(ValidationError, match="NGINX_FLEET_ENV"):
        Settings()
