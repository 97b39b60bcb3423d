"""Split `nginx -T` output into its files."""

from __future__ import annotations

import re

_HEADER = re.compile(r"^# configuration file (.+):[ \t]*\r?$", re.MULTILINE)


def is_dump(text: str) -> bool:
    """Whether the text looks like `nginx -T` output (has a configuration file header)."""
    return _HEADER.search(text) is not None


def split_dump(text: str) -> list[tuple[str, str]]:
    """(path, text) of each file in dump order.

    Anything before the first header (nginx's own stderr when merged) is skipped. nginx prints a
    newline after every file, so one trailing newline of each section is dropped to give back
    the file byte for byte. A path dumped twice keeps its first text.
    """
    headers = list(_HEADER.finditer(text))
    files: dict[str, str] = {}
    for index, header in enumerate(headers):
        body_start = header.end() + 1
        body_end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        body = text[body_start:body_end] if body_start <= body_end else ""
        if body.endswith("\n"):
            body = body[:-1]
        files.setdefault(header[1], body)
    return list(files.items())
