"""Settings read from the environment (pydantic-settings)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIN_PASSWORD_LENGTH = 12

# The repository checkout this module lives in; the built UI is looked for there by default.
_REPO_ROOT = Path(__file__).resolve().parents[3]

# Values that look like secrets but are published in docs and examples.
_KNOWN_DEFAULT_PASSWORDS = frozenset({"admin", "password", "changeme", "change-me", "nginx-fleet"})
# NGINX_FLEET_SECRET_KEY: shorter or repetitive values are guessable (`openssl rand -hex 32`
# gives 64 characters of 16 kinds).
MIN_SECRET_KEY_LENGTH = 32
MIN_SECRET_KEY_DISTINCT_CHARACTERS = 8


class Settings(BaseSettings):
    """Every setting of the control plane; absent DATABASE_URL/REDIS_URL mean embedded mode."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")
    redis_url: str | None = Field(default=None, validation_alias="REDIS_URL")
    env: Literal["development", "production"] = Field(
        default="development", validation_alias="NGINX_FLEET_ENV"
    )
    data_dir: Path = Field(default=Path("var"), validation_alias="NGINX_FLEET_DATA_DIR")
    ui_dir: Path = Field(
        default=_REPO_ROOT / "frontend" / "dist", validation_alias="NGINX_FLEET_UI_DIR"
    )
    # The agent's wheel built by `make build` (uv build), offered at /downloads/ to nginx hosts.
    downloads_dir: Path = Field(
        default=_REPO_ROOT / "agent" / "dist", validation_alias="NGINX_FLEET_DOWNLOADS_DIR"
    )
    public_url: str | None = Field(default=None, validation_alias="NGINX_FLEET_PUBLIC_URL")
    admin_user: str = Field(default="admin", validation_alias="NGINX_FLEET_ADMIN_USER")
    admin_password: SecretStr | None = Field(
        default=None, validation_alias="NGINX_FLEET_ADMIN_PASSWORD"
    )
    # Encrypts stored secrets (alert channels' passwords, tokens, Slack URLs). When unset
    # outside production, a random key is generated once in data_dir (app.notify.secrets);
    # production must set it, as the api and worker containers share no data dir.
    secret_key: SecretStr | None = Field(default=None, validation_alias="NGINX_FLEET_SECRET_KEY")
    ingest_max_bytes: int = Field(
        default=2 * 1024 * 1024, gt=0, validation_alias="INGEST_MAX_BYTES"
    )
    # Every other API request body (users, labels, acks, tokens: a few hundred bytes).
    api_body_max_bytes: int = Field(
        default=256 * 1024, gt=0, validation_alias="NGINX_FLEET_API_BODY_MAX_BYTES"
    )
    push_interval_s: int = Field(default=10, gt=0, validation_alias="NGINX_FLEET_PUSH_INTERVAL_S")
    # While a host has a change in flight (proposed by a person, approved, sent, applying) and
    # its agent may apply, push replies ask it to push again after this many seconds
    # (`next_push_s`), so an approval reaches it quickly; 0 never asks.
    change_push_interval_s: int = Field(
        default=2, ge=0, validation_alias="NGINX_FLEET_CHANGE_PUSH_INTERVAL_S"
    )
    # Length of each of the two equal windows (before and after an apply) a change's impact
    # compares.
    impact_window_s: int = Field(default=300, gt=0, validation_alias="NGINX_FLEET_IMPACT_WINDOW_S")
    # How far ahead of the server's clock a sample's ts may be (older than the raw retention is
    # refused too): a sample outside that window is refused alone.
    sample_max_future_s: int = Field(
        default=300, ge=0, validation_alias="NGINX_FLEET_SAMPLE_MAX_FUTURE_S"
    )
    db_pool_size: int = Field(default=20, gt=0, validation_alias="NGINX_FLEET_DB_POOL_SIZE")
    session_ttl_hours: int = Field(
        default=12, gt=0, validation_alias="NGINX_FLEET_SESSION_TTL_HOURS"
    )
    # Failed sign-ins allowed per window: for one username from one address, from one address,
    # and from everywhere together (a storm from many addresses is cut off too).
    login_max_failures: int = Field(
        default=10, gt=0, validation_alias="NGINX_FLEET_LOGIN_MAX_FAILURES"
    )
    login_max_failures_per_address: int = Field(
        default=30, gt=0, validation_alias="NGINX_FLEET_LOGIN_MAX_FAILURES_PER_ADDRESS"
    )
    login_max_failures_overall: int = Field(
        default=300, gt=0, validation_alias="NGINX_FLEET_LOGIN_MAX_FAILURES_OVERALL"
    )
    login_failure_window_s: int = Field(
        default=300, gt=0, validation_alias="NGINX_FLEET_LOGIN_FAILURE_WINDOW_S"
    )
    # argon2id needs 64 MiB and a core for ~50 ms per check: a few threads of their own, and a
    # short queue beyond which sign-ins are answered 503 at once instead of piling up.
    password_check_workers: int = Field(
        default=1, gt=0, le=16, validation_alias="NGINX_FLEET_PASSWORD_CHECK_WORKERS"
    )
    password_check_queue: int = Field(
        default=8, ge=0, le=1000, validation_alias="NGINX_FLEET_PASSWORD_CHECK_QUEUE"
    )
    # Peers whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses or networks,
    # comma separated): the web container's nginx in docker-compose.yml; others' are ignored.
    trusted_proxies: str = Field(
        default="127.0.0.1,::1", validation_alias="NGINX_FLEET_TRUSTED_PROXIES"
    )
    # A live event stream re-checks its session this often and ends when it is gone.
    events_recheck_s: float = Field(
        default=30, gt=0, validation_alias="NGINX_FLEET_EVENTS_RECHECK_S"
    )
    events_max_streams_per_user: int = Field(
        default=8, gt=0, validation_alias="NGINX_FLEET_EVENTS_MAX_STREAMS_PER_USER"
    )
    # A fleet-scoped live stream gets at most one `fleet` delta per this many seconds, whatever
    # the push rate (docs/live-events.md).
    events_coalesce_s: float = Field(
        default=1.0, gt=0, le=60, validation_alias="NGINX_FLEET_EVENTS_COALESCE_S"
    )
    # The Redis pub/sub channel of the live events: channels span every database of a Redis
    # server, so two deployments (or test runs) sharing one server need a channel each.
    events_channel: str = Field(
        default="nginx-fleet:events", min_length=1, validation_alias="NGINX_FLEET_EVENTS_CHANNEL"
    )

    @model_validator(mode="after")
    def _refuse_weak_secret_key(self) -> Settings:
        """Refuse a short or repetitive secret key, in any mode (an empty one means unset)."""
        key = self.secret_key.get_secret_value() if self.secret_key else ""
        if key and (
            len(key) < MIN_SECRET_KEY_LENGTH or len(set(key)) < MIN_SECRET_KEY_DISTINCT_CHARACTERS
        ):
            raise ValueError(
                f"NGINX_FLEET_SECRET_KEY is too weak (at least {MIN_SECRET_KEY_LENGTH} random "
                "characters; try `openssl rand -hex 32`)"
            )
        return self

    @model_validator(mode="after")
    def _refuse_insecure_production(self) -> Settings:
        """In production, refuse to start with a missing or guessable admin password."""
        if self.env != "production":
            return self
        password = self.admin_password.get_secret_value() if self.admin_password else ""
        if not password:
            raise ValueError(
                "NGINX_FLEET_ADMIN_PASSWORD must be set when NGINX_FLEET_ENV=production"
            )
        if len(password) < MIN_PASSWORD_LENGTH or password.lower() in _KNOWN_DEFAULT_PASSWORDS:
            raise ValueError(
                "NGINX_FLEET_ADMIN_PASSWORD is too weak for production "
                f"(at least {MIN_PASSWORD_LENGTH} characters, not a published default)"
            )
        return self

    @property
    def is_embedded(self) -> bool:
        """True when no Redis is configured: local Celery broker and in-process pub/sub."""
        return not self.redis_url

    @property
    def is_production(self) -> bool:
        """True when NGINX_FLEET_ENV=production."""
        return self.env == "production"

    @property
    def mode(self) -> Literal["embedded", "production"]:
        """Deployment mode as reported by /health."""
        return "embedded" if self.is_embedded else "production"

    @property
    def effective_database_url(self) -> str:
        """DATABASE_URL with the psycopg 3 driver, or the embedded SQLite file."""
        if not self.database_url:
            return f"sqlite:///{(self.data_dir / 'nginx-fleet.db').resolve()}"
        for plain in ("postgresql://", "postgres://"):
            if self.database_url.startswith(plain):
                return "postgresql+psycopg://" + self.database_url[len(plain) :]
        return self.database_url

    @property
    def celery_broker_url(self) -> str:
        """Redis when configured, else kombu's SQLAlchemy transport on a SQLite file."""
        if self.redis_url:
            return self.redis_url
        return f"sqla+sqlite:///{(self.data_dir / 'celery-broker.db').resolve()}"


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()
