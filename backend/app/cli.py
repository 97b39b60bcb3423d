"""The `nginx-fleet` command: run the server, migrate, create users and enrolment tokens."""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError
from sqlalchemy.exc import OperationalError, ProgrammingError

from app.core.config import get_settings
from app.core.db import SessionLocal, utcnow
from app.core.errors import ServiceError
from app.enrollment import service as enrollment_service
from app.enrollment.schemas import EnrollmentTokenCreate
from app.users import service as users_service
from app.users.models import Role

# Heavy modules (the app with every router, alembic, uvicorn, the analyser) are imported inside
# the commands that use them, so that scripted calls like create-enrollment-token start fast.

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger("nginx_fleet")

REPO_ROOT = Path(__file__).resolve().parents[2]
CELERY_APP = "app.worker.celery_app"
WORKER_STOP_TIMEOUT_S = 20


class CommandError(Exception):
    """A command could not do its job; the message is printed for the operator."""


def alembic_config() -> Config:
    """The Alembic configuration at the repository root (migrations/ next to it)."""
    from alembic.config import Config

    ini = REPO_ROOT / "alembic.ini"
    if not ini.is_file():
        raise CommandError(f"alembic.ini not found at {ini}; run from a full nginx-fleet checkout")
    return Config(str(ini))


def migrate() -> None:
    """Bring the database schema to the newest revision."""
    from alembic import command

    command.upgrade(alembic_config(), "head")


def serve_api(host: str, port: int) -> None:
    """Serve the API (and the built UI) with uvicorn until interrupted."""
    import uvicorn

    # create_app installs the proxy-headers middleware with NGINX_FLEET_TRUSTED_PROXIES; uvicorn's
    # own (driven by FORWARDED_ALLOW_IPS) would apply the headers a second time.
    uvicorn.run("app.main:create_app", factory=True, host=host, port=port, proxy_headers=False)


def start_worker() -> subprocess.Popen[bytes]:
    """Start the Celery worker with its embedded beat scheduler as a child process."""
    data_dir = get_settings().data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    schedule_file = data_dir / "celerybeat-schedule"
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        CELERY_APP,
        "worker",
        "-B",
        "--schedule",
        str(schedule_file),
        "--loglevel",
        "INFO",
    ]
    return subprocess.Popen(argv)


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    """Ask the worker to finish its tasks and exit; kill it if it does not in time."""
    if worker.poll() is not None:
        return
    worker.terminate()
    try:
        worker.wait(timeout=WORKER_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        log.error(
            "celery worker %d did not stop in %ds; killing it", worker.pid, WORKER_STOP_TIMEOUT_S
        )
        worker.kill()
        worker.wait()


def _stop_api_when_worker_dies(worker: subprocess.Popen[bytes], stopping: threading.Event) -> None:
    """Without its worker the embedded server is broken, so stop it rather than limp on."""
    code = worker.wait()
    if not stopping.is_set():
        log.error("celery worker exited with code %d; stopping nginx-fleet", code)
        os.kill(os.getpid(), signal.SIGTERM)


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    """Turn SIGTERM into a normal exit, so that cleanup code runs."""
    raise SystemExit(128 + signum)


def run_embedded(host: str, port: int) -> None:
    """All in one: migrate, then the API in this process and the worker with beat as a child."""
    migrate()
    worker = start_worker()
    stopping = threading.Event()
    watcher = threading.Thread(
        target=_stop_api_when_worker_dies, args=(worker, stopping), daemon=True
    )
    watcher.start()
    # uvicorn re-raises SIGTERM after its graceful shutdown; with the default handler that
    # would kill this process before `finally` stops the worker, orphaning it.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        serve_api(host, port)
    finally:
        stopping.set()
        stop_worker(worker)


def read_password(args: argparse.Namespace) -> str:
    """The new user's password from --password, stdin, or an interactive prompt."""
    if args.password is not None:
        return str(args.password)
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise CommandError("give the password with --password-stdin or --password")
    first = getpass.getpass("Password: ")
    if first != getpass.getpass("Repeat password: "):
        raise CommandError("the passwords differ")
    return first


def create_user(args: argparse.Namespace) -> None:
    """Create a user from the command line."""
    password = read_password(args)
    with SessionLocal() as session:
        user = users_service.create_user(
            session=session,
            actor="cli",
            username=args.username,
            password=password,
            role=Role(args.role),
        )
    print(f"created {user.role.value} {user.username!r} (id {user.id})")


def parse_label(text: str) -> tuple[str, str]:
    """Split one --label key=value."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"label {text!r} must look like key=value")
    return key, value


def create_enrollment_token(args: argparse.Namespace) -> None:
    """Issue an enrolment token and print only the token (for scripts)."""
    try:
        options = EnrollmentTokenCreate(
            labels=dict(args.label),
            expires_in_hours=args.expires_in_hours,
            max_uses=args.max_uses,
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors()
        )
        raise CommandError(problems) from exc
    with SessionLocal() as session:
        issued = enrollment_service.issue_token(
            session=session,
            actor="cli",
            labels=options.labels,
            expires_in_hours=options.expires_in_hours,
            max_uses=options.max_uses,
        )
    print(issued.token)


def alert_rules(args: argparse.Namespace) -> None:
    """Export the alert rules to a YAML file ("-": stdout), or import one ("-": stdin)."""
    from app.alerts import service as alerts_service

    with SessionLocal() as session:
        if args.action == "export":
            text = alerts_service.export_rules(session=session)
            if args.file == "-":
                sys.stdout.write(text)
            else:
                Path(args.file).write_text(text, encoding="utf-8")
            return
        source = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
        done = alerts_service.import_rules(session=session, text=source, actor="cli", now=utcnow())
    print(f"alert rules: {done.created} created, {done.updated} updated")


def print_openapi() -> None:
    """Print the OpenAPI document (the UI's client is generated from it)."""
    from app.main import create_app

    print(json.dumps(create_app().openapi(), indent=2, sort_keys=False))


def run_analyze(argv: Sequence[str]) -> int:
    """Hand `nginx-fleet analyze ...` to the config analysis tool."""
    from nginx_fleet_analyzer import cli as analysis_cli

    return analysis_cli.main(list(argv), prog="nginx-fleet analyze")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="nginx-fleet", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name, help_text in (
        ("run", "all in one: migrate, API and UI, Celery worker with beat (embedded mode)"),
        ("api", "the API (and the built UI) only, for production containers"),
    ):
        serve = commands.add_parser(name, help=help_text)
        serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
        serve.add_argument("--port", type=int, default=8000, help="port to listen on")

    commands.add_parser("migrate", help="upgrade the database schema to the newest revision")

    user = commands.add_parser("create-user", help="create a user")
    user.add_argument("username")
    user.add_argument("--role", choices=[role.value for role in Role], default=Role.viewer.value)
    source = user.add_mutually_exclusive_group()
    source.add_argument(
        "--password-stdin", action="store_true", help="read the password from stdin"
    )
    source.add_argument(
        "--password", help="the password (visible in the process list; prefer stdin)"
    )

    token = commands.add_parser("create-enrollment-token", help="print a new enrolment token")
    token.add_argument(
        "--label",
        type=parse_label,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="label given to hosts enrolled with it",
    )
    token.add_argument("--expires-in-hours", type=int, default=24)
    token.add_argument("--max-uses", type=int, default=1)

    rules = commands.add_parser("alert-rules", help="export or import the alert rules as YAML")
    rules.add_argument("action", choices=["export", "import"])
    rules.add_argument("file", help="the YAML file; - for stdout (export) or stdin (import)")

    commands.add_parser("openapi", help="print the OpenAPI document")
    commands.add_parser(
        "analyze", help="analyse an nginx config (see `nginx-fleet analyze -h`)", add_help=False
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["analyze"]:
        return run_analyze(arguments[1:])
    args = build_parser().parse_args(arguments)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        if args.command == "run":
            run_embedded(args.host, args.port)
        elif args.command == "api":
            serve_api(args.host, args.port)
        elif args.command == "migrate":
            migrate()
        elif args.command == "create-user":
            create_user(args)
        elif args.command == "create-enrollment-token":
            create_enrollment_token(args)
        elif args.command == "alert-rules":
            alert_rules(args)
        elif args.command == "openapi":
            print_openapi()
    except (CommandError, ServiceError) as exc:
        print(f"nginx-fleet {args.command}: {exc}", file=sys.stderr)
        return 1
    except (OperationalError, ProgrammingError) as exc:
        print(
            f"nginx-fleet {args.command}: the database is not reachable or not migrated "
            f"(run `nginx-fleet migrate`): {exc.orig}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
