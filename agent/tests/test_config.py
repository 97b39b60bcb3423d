"""Settings from the TOML file and environment overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from nginx_fleet_agent.config import AgentConfig, ConfigError, load_config, parse_label

TOML = """
server_url = "https://fleet.example"
state_dir = "/tmp/agent-state"
push_interval_s = 15
nginx_args = ["-p", "/tmp/x/", "-c", "conf/nginx.conf"]
pid_file = ""
tls_verify = false

[labels]
env = "prod"
role = "edge"
"""


def test_file_values(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(TOML)
    config = load_config(path, env={})
    assert config.server_url == "https://fleet.example"
    assert config.state_file == Path("/tmp/agent-state/state.json")
    assert config.push_interval_s == 15.0
    assert config.nginx_args == ["-p", "/tmp/x/", "-c", "conf/nginx.conf"]
    assert config.pid_file is None
    assert config.tls_verify is False
    assert config.labels == {"env": "prod", "role": "edge"}
    assert config.allow_apply is False


def test_env_overrides_file(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(TOML)
    env = {
        "NGINX_FLEET_AGENT_PUSH_INTERVAL_S": "30",
        "NGINX_FLEET_AGENT_LABELS": "env=staging, team=web",
        "NGINX_FLEET_AGENT_NGINX_ARGS": "-c '/etc/nginx dir/nginx.conf'",
        "NGINX_FLEET_AGENT_TLS_VERIFY": "yes",
        "NGINX_FLEET_AGENT_STUB_STATUS_URL": "http://127.0.0.1:8080/s",
    }
    config = load_config(path, env=env)
    assert config.push_interval_s == 30.0
    assert config.labels == {"env": "staging", "team": "web"}
    assert config.nginx_args == ["-c", "/etc/nginx dir/nginx.conf"]
    assert config.tls_verify is True
    assert config.stub_status_url == "http://127.0.0.1:8080/s"


def test_defaults_without_any_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nginx_fleet_agent.defaults.CONFIG_PATH", tmp_path / "absent.toml")
    assert load_config(None, env={}) == AgentConfig()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("push_interal_s = 5", "unknown setting(s): push_interal_s"),
        ('push_interval_s = "ten"', "push_interval_s: expected a number"),
        ("push_interval_s = 0.1", "push_interval_s must be >= 1"),
        ("labels = 3", "labels: expected a table of strings"),
        ("nginx_args = '-c x'", "nginx_args: expected a list of strings"),
        ("spool_max_samples = 0", "spool_max_samples must be >= 1"),
        ("server_url = [", "invalid TOML"),
        ('log_level = "LOUD"', "log_level must be"),
    ],
)
def test_bad_file_values_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(path, env={})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"NGINX_FLEET_AGENT_TLS_VERIFY": "maybe"}, "expected true or false"),
        ({"NGINX_FLEET_AGENT_PUSH_INTERVAL_S": "soon"}, "expected a number"),
        ({"NGINX_FLEET_AGENT_LABELS": "novalue"}, "key=value"),
    ],
)
def test_bad_env_values_are_named(
    env: dict[str, str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("nginx_fleet_agent.defaults.CONFIG_PATH", tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match=message):
        load_config(None, env=env)


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml", env={})


def test_parse_label() -> None:
    assert parse_label(" env = prod ") == ("env", "prod")
    with pytest.raises(ConfigError):
        parse_label("=x")


def test_shipped_example_holds_the_defaults() -> None:
    example = Path(__file__).resolve().parents[1] / "packaging" / "agent.toml.example"
    assert load_config(example, env={}) == AgentConfig()


def test_backoff_cap_is_configurable_and_bounded(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    path.write_text("backoff_cap_s = 5\n")
    assert load_config(path, env={}).backoff_cap_s == 5
    path.write_text("backoff_cap_s = 0.5\n")
    with pytest.raises(ConfigError, match="backoff_cap_s must be >= 1"):
        load_config(path, env={})
