"""The production stack as processes on this machine: API replicas (the UI's pool and the agents'
ingest pool, as the web container routes them), Celery workers and beat run with the commands of
docker-compose.yml, in production mode, on a throw-away database and a Redis database number of
their own."""

from __future__ import annotations

import contextlib
import secrets
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import redis
import yaml

from harness import control_plane as cp
from harness.processes import ManagedProcess, running

REPO_ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO_ROOT / "docker-compose.yml"
# A Redis database number no test suite or other benchmark uses (tests 15, other benches 14).
REDIS_DB = 12
REDIS_URL = f"redis://127.0.0.1:6379/{REDIS_DB}"


@dataclass(frozen=True)
class ApiPools:
    """Where the browser's requests go (`ui`) and where the agents push (`ingest`); one pool
    serves both when the stack runs without a separate ingest pool."""

    ui: cp.ControlPlane
    ingest: cp.ControlPlane

    @property
    def separate(self) -> bool:
        """True when agents push to processes of their own."""
        return self.ingest is not self.ui


@contextlib.contextmanager
def running_api_pools(
    *, env: Mapping[str, str], ui_workers: int, ingest_workers: int, log_dir: Path
) -> Iterator[ApiPools]:
    """The API as docker-compose.yml deploys it: the `api` service for the UI and, unless
    `ingest_workers` is 0, the `api-ingest` service that deploy/nginx.conf sends
    /api/v1/agent/ to; uvicorn processes stand in for the replicas."""
    with contextlib.ExitStack() as stack:
        ui = stack.enter_context(cp.running_api(env=env, workers=ui_workers, log_dir=log_dir))
        ingest = ui
        if ingest_workers > 0:
            ingest_logs = log_dir / "api-ingest"
            ingest_logs.mkdir(parents=True, exist_ok=True)
            ingest = stack.enter_context(
                cp.running_api(env=env, workers=ingest_workers, log_dir=ingest_logs)
            )
        yield ApiPools(ui=ui, ingest=ingest)


@dataclass(frozen=True)
class CeleryService:
    """One Celery service of docker-compose.yml: its name and command line."""

    name: str
    argv: list[str]

    @property
    def is_beat(self) -> bool:
        """True for the beat scheduler."""
        return "beat" in self.argv


def production_env(*, database: str, data_dir: Path, base: Mapping[str, str]) -> dict[str, str]:
    """The backend's environment as in docker-compose.yml (NGINX_FLEET_ENV=production, which
    requires a strong admin password and a secret key), on loopback services."""
    env = cp.backend_env(database=database, data_dir=data_dir, base=base)
    env.update(
        NGINX_FLEET_ENV="production",
        REDIS_URL=REDIS_URL,
        NGINX_FLEET_SECRET_KEY=secrets.token_hex(32),
        # Pub/sub channels span every database number of a Redis server: a channel of our own
        # keeps other test runs' live events out of the streams this run counts.
        NGINX_FLEET_EVENTS_CHANNEL=f"nginx-fleet:bench-{secrets.token_hex(4)}",
    )
    return env


def compose_celery_services(compose_file: Path = COMPOSE_FILE) -> list[CeleryService]:
    """Every service of the compose file whose command runs Celery (workers, then beat)."""
    document = yaml.safe_load(compose_file.read_text())
    found: list[CeleryService] = []
    for name, service in (document.get("services") or {}).items():
        command = service.get("command")
        if isinstance(command, str):
            command = command.split()
        if isinstance(command, list) and command[:1] == ["celery"]:
            found.append(CeleryService(name=name, argv=[str(part) for part in command]))
    if not any(s.is_beat for s in found) or all(s.is_beat for s in found):
        raise RuntimeError(f"{compose_file}: expected Celery worker and beat services")
    return sorted(found, key=lambda s: s.is_beat)


def local_argv(service: CeleryService, *, data_dir: Path) -> list[str]:
    """The service's command with this checkout's celery and a local beat schedule file."""
    argv = [str(cp.VENV_BIN / "celery"), *service.argv[1:]]
    if "--schedule" in argv:
        argv[argv.index("--schedule") + 1] = str(data_dir / f"{service.name}-schedule")
    # The containers log at INFO (one line per task); here that would cost the worker CPU and
    # fill the disk over a 10 minute run.
    if "--loglevel" in argv:
        argv[argv.index("--loglevel") + 1] = "WARNING"
    return argv


@contextlib.contextmanager
def running_celery(
    *, env: Mapping[str, str], data_dir: Path, log_dir: Path, with_beat: bool = True
) -> Iterator[dict[str, ManagedProcess]]:
    """Start every Celery service of docker-compose.yml (beat only `with_beat`); stop each by
    PID on the way out (SIGTERM: a warm shutdown)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        started: dict[str, ManagedProcess] = {}
        for service in compose_celery_services():
            if service.is_beat and not with_beat:
                continue
            started[service.name] = stack.enter_context(
                running(
                    service.name,
                    local_argv(service, data_dir=data_dir),
                    log_path=log_dir / f"{service.name}.log",
                    env=env,
                )
            )
        yield started


@contextlib.contextmanager
def own_redis_database() -> Iterator[redis.Redis]:
    """Our Redis database number, emptied before and after (FLUSHDB: only this number)."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.flushdb()
        yield client
    finally:
        client.flushdb()
        client.close()


def wrk_available() -> bool:
    """True when the wrk load generator is installed."""
    return shutil.which("wrk") is not None
