"""The `nginx-fleet` command against the test PostgreSQL database."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from app.core.security import verify_password
from app.enrollment.service import consume_enrollment_token
from app.users.models import Role, User
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from tests.conftest import TEST_REDIS_URL
from tests.core.processes import embedded_env, run_cli


@pytest.fixture
def cli_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url, REDIS_URL=TEST_REDIS_URL, NGINX_FLEET_DATA_DIR=str(tmp_path)
    )
    return env


def test_create_user_reads_the_password_from_stdin(
    cli_env: dict[str, str], db_session: Session
) -> None:
    result = run_cli(
        "create-user",
        "ops",
        "--role",
        "operator",
        "--password-stdin",
        env=cli_env,
        stdin="a long cli password\n",
    )
    assert result.returncode == 0, result.stderr
    assert "created operator 'ops'" in result.stdout
    user = db_session.scalars(select(User).where(User.username == "ops")).one()
    assert user.role == Role.operator
    assert verify_password("a long cli password", user.password_hash)


def test_create_user_refuses_short_passwords_and_duplicates(
    cli_env: dict[str, str], db_session: Session
) -> None:
    short = run_cli("create-user", "ops", "--password", "short", env=cli_env)
    assert short.returncode == 1
    assert "at least 12 characters" in short.stderr
    assert (
        run_cli("create-user", "ops", "--password", "long enough pass", env=cli_env).returncode == 0
    )
    again = run_cli("create-user", "ops", "--password", "long enough pass", env=cli_env)
    assert again.returncode == 1
    assert "already exists" in again.stderr
    assert len(db_session.scalars(select(User)).all()) == 1


def test_create_user_without_a_password_source_fails_clearly(cli_env: dict[str, str]) -> None:
    result = run_cli("create-user", "ops", env=cli_env, stdin="")
    assert result.returncode == 1
    assert "--password-stdin" in result.stderr


def test_create_enrollment_token_prints_only_a_usable_token(
    cli_env: dict[str, str], db_session: Session
) -> None:
    result = run_cli(
        "create-enrollment-token",
        "--label",
        "env=demo",
        "--label",
        "role=edge",
        "--max-uses",
        "3",
        env=cli_env,
    )
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert token.startswith("nfe_") and "\n" not in token
    row = consume_enrollment_token(session=db_session, token=token)
    assert row.labels == {"env": "demo", "role": "edge"}
    assert row.max_uses == 3


def test_create_enrollment_token_refuses_bad_labels(cli_env: dict[str, str]) -> None:
    result = run_cli("create-enrollment-token", "--label", "no-equals-sign", env=cli_env)
    assert result.returncode == 2
    assert "key=value" in result.stderr
    bad_key = run_cli("create-enrollment-token", "--label", "a:b=c", env=cli_env)
    assert bad_key.returncode == 1
    assert "labels.a:b" in bad_key.stderr


def test_openapi_prints_the_document(cli_env: dict[str, str]) -> None:
    result = run_cli("openapi", env=cli_env)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert "/api/v1/auth/login" in document["paths"]


def test_commands_on_an_unmigrated_database_say_what_to_do(tmp_path: Path) -> None:
    result = run_cli("create-enrollment-token", env=embedded_env(tmp_path))
    assert result.returncode == 1
    assert "run `nginx-fleet migrate`" in result.stderr
    assert "Traceback" not in result.stderr


def test_alert_rules_export_then_import_through_files(
    cli_env: dict[str, str], db_session: Session, tmp_path: Path
) -> None:
    from app.alerts.models import AlertRule
    from app.alerts.rules_file import default_rules, dump_rules

    db_session.execute(delete(AlertRule))
    db_session.commit()
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(
        dump_rules(default_rules(), {}).replace("threshold: 14.0", "threshold: 10.0")
    )
    imported = run_cli("alert-rules", "import", str(rules_file), env=cli_env)
    assert imported.returncode == 0, imported.stderr
    assert "13 created, 0 updated" in imported.stdout
    exported = run_cli("alert-rules", "export", "-", env=cli_env)
    assert (
        "key: tls-certificate-expiring" in exported.stdout and "threshold: 10.0" in exported.stdout
    )
    rules_file.write_text("rules:\n- {key: broken}\n")
    refused = run_cli("alert-rules", "import", str(rules_file), env=cli_env)
    assert refused.returncode == 1 and "rules[0]" in refused.stderr
