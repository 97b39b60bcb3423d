"""The journal of one apply: backups, the new versions and how far it got, under the state dir.

It lives in `<state_dir>/apply/<action_id>/`, never beside the config files: a backup next to
`site.conf` could match an `include *.conf` glob and be loaded by nginx. It is written (and
fsynced) before the first config file is touched, so an agent killed at any point after that
finds it at start and puts every file back.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nginx_fleet_agent.apply.files import FileMeta, read_bytes, write_file, write_private

JOURNAL_NAME = "journal.json"
# Phases, in order; anything before FINISHED at start means the apply was interrupted.
BACKED_UP = "backed_up"
RELOADING = "reloading"
FINISHED = "finished"


@dataclass(frozen=True)
class JournalFile:
    """One file of the apply: where it is, how it is written, its backup and new version."""

    path: str
    mode: int
    uid: int
    gid: int
    in_place: bool
    backup: str
    new: str

    @property
    def meta(self) -> FileMeta:
        """Mode and owner to restore."""
        return FileMeta(self.mode, self.uid, self.gid)


class Journal:
    """The on-disk record of one action's apply."""

    def __init__(self, directory: Path, data: dict[str, Any]) -> None:
        self.directory = directory
        self._data = data

    @classmethod
    def create(
        cls,
        apply_dir: Path,
        action_id: int,
        files: list[tuple[str, FileMeta, bool, bytes, bytes]],
    ) -> Journal:
        """Store every backup and new version, then the journal itself; all fsynced."""
        directory = apply_dir / str(action_id)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        entries = []
        for index, (path, meta, in_place, original, new) in enumerate(files):
            backup, failed = f"backup-{index}", f"new-{index}"
            write_private(str(directory / backup), original)
            # The version that was written is kept as evidence when it has to be rolled back.
            write_private(str(directory / failed), new)
            entries.append(
                asdict(JournalFile(path, meta.mode, meta.uid, meta.gid, in_place, backup, failed))
            )
        journal = cls(directory, {"action_id": action_id, "phase": BACKED_UP, "files": entries})
        journal._save()
        return journal

    @classmethod
    def load(cls, directory: Path) -> Journal | None:
        """The journal in `directory`, or None when there is none (or it is unreadable)."""
        try:
            data = json.loads((directory / JOURNAL_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return cls(directory, data) if isinstance(data, dict) else None

    @property
    def action_id(self) -> int:
        """The action this journal belongs to."""
        return int(self._data["action_id"])

    @property
    def phase(self) -> str:
        """How far the apply got."""
        return str(self._data["phase"])

    @property
    def outcome(self) -> dict[str, Any] | None:
        """The outcome report recorded at the end, once finished."""
        outcome = self._data.get("outcome")
        return outcome if isinstance(outcome, dict) else None

    @property
    def files(self) -> list[JournalFile]:
        """Every file of the apply."""
        return [JournalFile(**entry) for entry in self._data["files"]]

    def set_phase(self, phase: str) -> None:
        """Record progress durably before acting on it."""
        self._data["phase"] = phase
        self._save()

    def finish(self, outcome: dict[str, Any]) -> None:
        """Mark the apply done with its outcome (recovery then only re-reports it)."""
        self._data["phase"] = FINISHED
        self._data["outcome"] = outcome
        self._save()

    def backup_of(self, entry: JournalFile) -> bytes:
        """The original bytes of a file."""
        return read_bytes(str(self.directory / entry.backup))

    def restore(self) -> list[str]:
        """Put every file back byte for byte; the problems, one per file not restored."""
        problems = []
        for entry in self.files:
            try:
                original = self.backup_of(entry)
                if _current(entry.path) != original:
                    write_file(entry.path, original, entry.meta, in_place=entry.in_place)
                if _current(entry.path) != original:
                    problems.append(f"{entry.path}: content differs from the backup after restore")
                elif not entry.in_place:
                    os.chown(entry.path, entry.uid, entry.gid)
                    os.chmod(entry.path, entry.mode)
            except OSError as exc:
                backup = self.directory / entry.backup
                problems.append(f"{entry.path}: {exc.strerror or exc}; backup in {backup}")
        return problems

    def _save(self) -> None:
        write_private(str(self.directory / JOURNAL_NAME), json.dumps(self._data, indent=1).encode())


def unfinished(apply_dir: Path) -> list[Journal]:
    """Journals of applies that did not finish (the agent died or was killed), oldest first."""
    if not apply_dir.is_dir():
        return []
    found = []
    for entry in apply_dir.iterdir():
        if entry.is_dir() and entry.name.isdigit():
            journal = Journal.load(entry)
            if journal is not None and journal.phase != FINISHED:
                found.append(journal)
    return sorted(found, key=lambda j: j.action_id)


def _current(path: str) -> bytes | None:
    try:
        return read_bytes(path)
    except FileNotFoundError:
        return None
