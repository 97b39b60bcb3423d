"""The enrolment state file: who this agent is and how it authenticates."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path


class StateError(Exception):
    """The state file is missing or unreadable."""


@dataclass(frozen=True)
class AgentState:
    """Identity written at enrolment."""

    agent_id: str
    host_id: int
    host_token: str
    server: str


def load_state(path: Path) -> AgentState:
    """Read the state file written by `enroll`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StateError(
            f"{path} not found: enrol first with `nginx-fleet-agent enroll --server URL --token T`"
        ) from None
    except (OSError, ValueError) as exc:
        raise StateError(f"{path}: cannot read state: {exc}") from exc
    try:
        return AgentState(
            agent_id=str(data["agent_id"]),
            host_id=int(data["host_id"]),
            host_token=str(data["host_token"]),
            server=str(data["server"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise StateError(f"{path}: malformed state file ({exc!r}); re-enrol") from exc


def read_agent_id(path: Path) -> str | None:
    """The enrolled agent id, or None when the state file is absent or unreadable."""
    try:
        return load_state(path).agent_id
    except StateError:
        return None


def save_state(path: Path, state: AgentState) -> None:
    """Write the state file atomically with mode 0600 (it holds the host token)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(asdict(state), handle, indent=2)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
