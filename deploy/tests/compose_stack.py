"""docker-compose.yml as a project of its own: up, health, SQL in its database, and down."""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILES = (REPO / "docker-compose.yml", REPO / "deploy" / "compose" / "local-images.yml")
# Every project this test starts is named so; one left by a killed run is taken down first.
PROJECT_PREFIX = "nf-compose-test-"


class ComposeError(RuntimeError):
    """A docker compose command failed, or the stack did not become healthy in time."""


def write_env_file(path: Path, *, http_port: int) -> dict[str, str]:
    """A production .env with fresh strong secrets, as deploy/env.example asks; returns it."""
    values = {
        "POSTGRES_PASSWORD": secrets.token_hex(24),
        "NGINX_FLEET_ADMIN_USER": "admin",
        "NGINX_FLEET_ADMIN_PASSWORD": secrets.token_urlsafe(24),
        "NGINX_FLEET_PUBLIC_URL": f"http://127.0.0.1:{http_port}",
        "NGINX_FLEET_HTTP_PORT": str(http_port),
        "NGINX_FLEET_SECRET_KEY": secrets.token_hex(32),
        # The services read this file rather than the checkout's own .env.
        "NGINX_FLEET_ENV_FILE": str(path),
    }
    path.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    path.chmod(0o600)
    return values


@dataclass(frozen=True)
class ComposeProject:
    """One compose project of docker-compose.yml plus the local-images override."""

    name: str
    env_file: Path
    log_path: Path

    def run(
        self, *args: str, timeout_s: float = 120, check: bool = True, stdin: str | None = None
    ) -> str:
        """`docker compose ARGS` for this project; its output is logged and returned."""
        argv = ["docker", "compose", "--env-file", str(self.env_file), "-p", self.name]
        for file in COMPOSE_FILES:
            argv += ["-f", str(file)]
        argv += list(args)
        done = subprocess.run(
            argv,
            cwd=REPO,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        with self.log_path.open("a") as log:
            log.write(f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}\n[exit {done.returncode}]\n")
        if check and done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
            raise ComposeError(f"docker compose {' '.join(args)} exited {done.returncode}:\n{tail}")
        return done.stdout

    def services(self) -> dict[str, dict[str, Any]]:
        """`docker compose ps -a` as {service: its JSON record}."""
        out = self.run("ps", "-a", "--format", "json")
        records = [json.loads(line) for line in out.splitlines() if line.strip()]
        return {record["Service"]: record for record in records}

    def config(self) -> dict[str, Any]:
        """The merged, interpolated configuration (`docker compose config`)."""
        merged: dict[str, Any] = json.loads(self.run("config", "--format", "json"))
        return merged

    def unready(self) -> list[str]:
        """What keeps the stack from being ready, in words (empty when it is): one-shot services
        (restart "no") must have exited 0, the others run, and pass their healthcheck if any."""
        declared = self.config()["services"]
        one_shot = [name for name, spec in declared.items() if spec.get("restart") == "no"]
        running = [name for name in declared if name not in one_shot]
        checked = {name for name, spec in declared.items() if spec.get("healthcheck")}
        services = self.services()
        problems = []
        for name in one_shot:
            record = services.get(name)
            if record is None or record["State"] != "exited":
                problems.append(f"{name}: not finished")
            elif record["ExitCode"] != 0:
                raise ComposeError(f"{name} exited {record['ExitCode']}:\n{self.logs(name)}")
        for name in running:
            record = services.get(name)
            if record is None or record["State"] != "running":
                state = record["State"] if record else "missing"
                if state in ("exited", "dead"):
                    raise ComposeError(f"{name} is {state}:\n{self.logs(name)}")
                problems.append(f"{name}: {state}")
            elif name in checked and record.get("Health") != "healthy":
                problems.append(f"{name}: {record.get('Health') or 'no health yet'}")
        return problems

    def wait_ready(self, timeout_s: float) -> None:
        """Wait until migrate succeeded, every service runs and every healthcheck passes."""
        deadline = time.monotonic() + timeout_s
        problems = ["not checked yet"]
        while time.monotonic() < deadline:
            problems = self.unready()
            if not problems:
                return
            time.sleep(2)
        raise ComposeError(f"the stack is not ready after {timeout_s:.0f} s: {problems}")

    def logs(self, service: str, lines: int = 40) -> str:
        """The last lines a service printed."""
        return self.run("logs", "--no-color", "--tail", str(lines), service, check=False)

    def psql(self, sql: str, **variables: int | str) -> list[list[str]]:
        """Run SQL in the stack's database (inside the postgres container); rows of fields.

        `variables` are psql variables: write :'name' in `sql` for a quoted literal."""
        argv = ["exec", "-T", "postgres", "psql", "-X", "-A", "-t", "-F", "\t"]
        argv += ["-v", "ON_ERROR_STOP=1", "-U", "nginx_fleet", "-d", "nginx_fleet"]
        for name, value in variables.items():
            argv += ["-v", f"{name}={value}"]
        out = self.run(*argv, stdin=sql)
        return [line.split("\t") for line in out.splitlines() if line]

    def down(self) -> None:
        """Remove the containers, the network and the volumes (the built images stay cached)."""
        self.run("down", "--volumes", "--remove-orphans", "--timeout", "20", timeout_s=300)


def stale_projects() -> list[str]:
    """Projects of earlier runs of this test that are still there (a run that was killed)."""
    done = subprocess.run(
        ["docker", "compose", "ls", "--all", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [
        p["Name"] for p in json.loads(done.stdout or "[]") if p["Name"].startswith(PROJECT_PREFIX)
    ]


def remove_superseded_images() -> None:
    """Remove the images earlier runs of this test built and a rebuild left untagged."""
    untagged = subprocess.run(
        ["docker", "images", "-q", "--filter", "dangling=true",
         "--filter", "label=com.docker.compose.project"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout.split()  # fmt: skip
    ours = []
    for image in untagged:
        project = subprocess.run(
            ["docker", "image", "inspect", "--format",
             '{{ index .Config.Labels "com.docker.compose.project" }}', image],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout.strip()  # fmt: skip
        if project.startswith(PROJECT_PREFIX):
            ours.append(image)
    if ours:
        subprocess.run(["docker", "rmi", *ours], capture_output=True, timeout=300, check=True)


def published_bindings(project: str) -> list[tuple[str, str, str]]:
    """Every published port of the project's containers: (container, host address, host port)."""
    ids = subprocess.run(
        ["docker", "ps", "-q", "--filter", f"label=com.docker.compose.project={project}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    bindings = []
    for container in ids:
        inspected = subprocess.run(
            [
                "docker",
                "inspect",
                "--format",
                "{{json .NetworkSettings.Ports}}|{{.Name}}",
                container,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
        ports_json, name = inspected.rsplit("|", 1)
        for host_bindings in (json.loads(ports_json) or {}).values():
            for binding in host_bindings or []:
                bindings.append((name.lstrip("/"), binding["HostIp"], binding["HostPort"]))
    return bindings
