"""Fixtures: real nginx instances and agent settings pointing at them."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nginx_fleet_agent.config import AgentConfig

from tests.log_traffic import UpstreamApp
from tests.nginx_instance import STUB_STATUS_SERVER, NginxInstance


@pytest.fixture
def nginx_factory(tmp_path: Path) -> Iterator[Callable[..., NginxInstance]]:
    """Create (and at teardown stop) nginx instances; `start=False` leaves one stopped."""
    instances: list[NginxInstance] = []

    def make(
        server_block: str = STUB_STATUS_SERVER, *, start: bool = True, **main: int
    ) -> NginxInstance:
        # `main`: settings of the main file (workers, connections), see NginxInstance.create.
        instance = NginxInstance.create(tmp_path / f"nginx{len(instances)}", server_block, **main)
        instances.append(instance)
        if start:
            instance.start()
        return instance

    yield make
    for instance in instances:
        instance.stop()


@pytest.fixture
def nginx(nginx_factory: Callable[..., NginxInstance]) -> NginxInstance:
    """A running nginx with a stub_status location."""
    return nginx_factory()


def agent_config_for(instance: NginxInstance, state_dir: Path, **overrides: object) -> AgentConfig:
    """Agent settings that watch `instance` and keep state in `state_dir`."""
    values: dict[str, object] = {
        "state_dir": state_dir,
        "nginx_args": instance.args,
        "hostname": "test-host",
        "labels": {"env": "test"},
    }
    values.update(overrides)
    return AgentConfig(**values)  # type: ignore[arg-type]


@pytest.fixture
def app() -> Iterator[UpstreamApp]:
    """The upstream app nginx proxies to."""
    upstream = UpstreamApp()
    yield upstream
    upstream.close()


@pytest.fixture
def cache_dir() -> Iterator[Path]:
    """A cache directory nginx's workers (user nobody) can write: pytest's tmp_path is private
    to root, so a cache under it would make every request a MISS."""
    path = Path(tempfile.mkdtemp(prefix="nf-cache-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)
