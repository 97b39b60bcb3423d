"""A parser for the lines one `log_format` writes: variables become fields, literal text anchors.

The parser captures only the fields the aggregates use and returns, for a chunk of whole lines,
one tuple of them per line that matched (`positions` says which field is where). Matching a
whole chunk with one `findall` keeps the per-line work inside the regex engine, which is what
makes the agent cost a few percent of a core on a busy host (bench/access_log.py).

How nginx writes values (ngx_http_log_module.c, ngx_http_log_escape): with `escape=default`
a `"`, a `\\` and bytes below 0x20 or above 0x7e become `\\xHH`, so a quoted value never holds a
`"`; with `escape=json` they become JSON escapes; with `escape=none` nothing is escaped. A
variable without a value is written as `-` with `escape=default`, as nothing with the other two
(checked against the real nginx in agent/tests/test_access_log_formats.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from nginx_fleet_analyzer.access_logs import LogFormat

# The variables the aggregates read, by the field they fill. The first present one wins.
FIELD_VARIABLES: dict[str, tuple[str, ...]] = {
    "site": ("host", "server_name", "http_host"),
    "status": ("status",),
    "request_time": ("request_time",),
    "upstream_time": ("upstream_response_time",),
    "upstream_addr": ("upstream_addr",),
    "upstream_status": ("upstream_status",),
    "cache": ("upstream_cache_status",),
    "bytes": ("body_bytes_sent", "bytes_sent"),
    "method": ("request_method", "request"),
    "path": ("request_uri", "uri", "request"),
}
# Fields whose absence the UI explains (the others only refine a figure).
REPORTED_MISSING = {
    "status": "status",
    "request_time": "request_time",
    "upstream_time": "upstream_response_time",
    "cache": "upstream_cache_status",
    "upstream_addr": "upstream_addr",
    "bytes": "body_bytes_sent",
    "site": "host",
}

_NUMBER = rb"(?:\d+|-)"
_DECIMAL = rb"(?:\d+(?:\.\d+)?|-)"
# `, ` between the attempts of one upstream pass, ` : ` between internal-redirect groups.
_LIST_SEP = rb"(?:, | : )"
# Value patterns of well-known variables; any other variable matches up to its next anchor.
_TYPED: dict[str, bytes] = {
    "status": rb"\d{3}|-",
    "body_bytes_sent": _NUMBER,
    "bytes_sent": _NUMBER,
    "request_length": _NUMBER,
    "connection": _NUMBER,
    "connection_requests": _NUMBER,
    "pid": _NUMBER,
    "msec": _DECIMAL,
    "request_time": _DECIMAL,
    # Per-attempt lists: one value per upstream server tried.
    "upstream_response_time": _DECIMAL + rb"(?:" + _LIST_SEP + _DECIMAL + rb")*",
    "upstream_connect_time": _DECIMAL + rb"(?:" + _LIST_SEP + _DECIMAL + rb")*",
    "upstream_header_time": _DECIMAL + rb"(?:" + _LIST_SEP + _DECIMAL + rb")*",
    "upstream_status": _NUMBER + rb"(?:" + _LIST_SEP + _NUMBER + rb")*",
    "upstream_response_length": _NUMBER + rb"(?:" + _LIST_SEP + _NUMBER + rb")*",
    "upstream_bytes_received": _NUMBER + rb"(?:" + _LIST_SEP + _NUMBER + rb")*",
    "upstream_bytes_sent": _NUMBER + rb"(?:" + _LIST_SEP + _NUMBER + rb")*",
    "upstream_addr": rb"[^ ,\n]+(?:" + _LIST_SEP + rb"[^ ,\n]+)*",
    "upstream_cache_status": rb"[A-Z]+|-",
    "time_local": rb"[^\]\n]+",
    "remote_addr": rb"[^ \n]+",
}


# JSON values are checked against the same shapes as text fields.
_VALID = {name: re.compile(pattern + rb"|") for name, pattern in _TYPED.items()}


class Fields:
    """Which variable fills each field, and its index in a parsed tuple (None: absent)."""

    def __init__(self, variables: Iterable[str]) -> None:
        present = set(variables)
        self.variable: dict[str, str | None] = {
            name: next((v for v in wanted if v in present), None)
            for name, wanted in FIELD_VARIABLES.items()
        }

    @property
    def missing(self) -> list[str]:
        """The reported variables this format lacks (protocol's `missing_fields`)."""
        return [
            variable for field, variable in REPORTED_MISSING.items() if not self.variable[field]
        ]


class LineParser:
    """Parses the lines of one format into tuples of captured fields (`positions` says where)."""

    def __init__(self, log_format: LogFormat, *, with_paths: bool = False) -> None:
        self.format = log_format
        self.fields = Fields(log_format.variables)
        if not with_paths:
            self.fields.variable["path"] = None
        self._paths = _json_paths(log_format, self.fields)
        self.is_json = self._paths is not None
        self.positions: dict[str, int]
        if self._paths is not None:
            self.positions = {field: index for index, (field, _) in enumerate(self._paths)}
            self._valid = [_VALID.get(self.fields.variable[f] or "") for f, _ in self._paths]
        else:
            self._regex, order = _compile(log_format, self.fields)
            self.positions = {field: index for index, field in enumerate(order) if field}

    def parse(self, chunk: bytes) -> list[tuple[bytes, ...]]:
        """One tuple per line of `chunk` (whole lines) that is in this format; others skipped."""
        if self.is_json:
            return self._parse_json(chunk)
        return self._regex.findall(chunk)

    def matches(self, line: bytes) -> bool:
        """Whether one line (without its newline) is in this format."""
        return bool(self.parse(line + b"\n"))

    def _parse_json(self, chunk: bytes) -> list[tuple[bytes, ...]]:
        assert self._paths is not None
        parsed: list[tuple[bytes, ...]] = []
        for line in chunk.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            values = tuple(
                _json_value(record, path, field, self.fields.variable[field] == "request")
                for field, path in self._paths
            )
            # JSON values are not checked by a regex: a status of "abc" is a line that does
            # not match, like a text line would be.
            checks = zip(self._valid, values, strict=True)
            if all(valid is None or valid.fullmatch(value) for valid, value in checks):
                parsed.append(values)
        return parsed


def _json_value(record: object, path: tuple[str, ...], field: str, from_request: bool) -> bytes:
    """A field's value as nginx wrote it (numbers back in their text form); b"" if absent."""
    value = record
    for key in path:
        if not isinstance(value, dict):
            return b""
        value = value.get(key)
    if value is None or isinstance(value, dict | list):
        return b""
    text = value if isinstance(value, str) else json.dumps(value)
    if from_request:
        # $request is "METHOD PATH PROTOCOL": the method, or the path without its query.
        parts = text.split(" ")
        if len(parts) < 2 or not parts[0].isalpha():
            return b""
        text = parts[0] if field == "method" else parts[1].split("?", 1)[0]
    return text.encode("utf-8", "surrogateescape")


def _json_paths(log_format: LogFormat, fields: Fields) -> list[tuple[str, tuple[str, ...]]] | None:
    """(field, key path) of each field whose variable is a whole value of a JSON format.

    The format's text with each variable replaced by a marker is parsed as JSON, so nested
    objects and escaped keys are found as nginx will write them; None when the text is not a
    JSON object (the format is then read as text)."""
    if not log_format.text.lstrip().startswith("{"):
        return None
    pieces: list[str] = []
    tokens = list(log_format.tokens())
    for index, (kind, value) in enumerate(tokens):
        if kind == "text":
            pieces.append(value)
            continue
        before = tokens[index - 1][1].rstrip() if index and tokens[index - 1][0] == "text" else ""
        following = tokens[index + 1] if index + 1 < len(tokens) else ("text", "")
        after = following[1].lstrip() if following[0] == "text" else ""
        # A JSON escape of NUL, which no key or literal of a real format holds.
        marker = f"\\u0000{value}\\u0000"
        if before.endswith('"') and after.startswith('"'):
            pieces.append(marker)  # a quoted whole value: "$var"
        elif before.endswith((":", "[", ",")) and after.startswith((",", "}", "]")):
            pieces.append(f'"{marker}"')  # a bare number: $var
        else:
            pieces.append("x")  # part of a longer string
    try:
        template = json.loads("".join(pieces))
    except ValueError:
        return None
    if not isinstance(template, dict):
        return None
    where: dict[str, tuple[str, ...]] = {}

    def walk(node: object, path: tuple[str, ...]) -> None:
        if isinstance(node, dict):
            for key, child in node.items():
                walk(child, (*path, key))
        elif isinstance(node, str) and node.startswith("\0") and node.endswith("\0"):
            where.setdefault(node.strip("\0"), path)

    walk(template, ())
    found = []
    for field, variable in fields.variable.items():
        if variable and variable in where:
            found.append((field, where[variable]))
        elif variable:
            fields.variable[field] = None
    return found


def _value_pattern(variable: str, before: str, after: str, escape: str) -> bytes:
    """The regex of one variable's value between the literal texts around it."""
    if variable == "request":
        # "METHOD PATH PROTOCOL" when well formed; anything (a probe, garbage) otherwise.
        inner = rb"[^\"\n]*" if escape != "none" else rb"[^\n]*?"
        return rb"(?:[A-Z]+ [^ \"\n]*(?: [^\"\n]*)?|" + inner + rb")"
    typed = _TYPED.get(variable)
    if typed is not None:
        # escape=json and escape=none write an empty value as nothing, not "-".
        return rb"(?:" + typed + (rb"|)" if escape != "default" else rb")")
    if escape == "none":
        # Unescaped values may hold the very text that follows them: the shortest match that
        # lets the rest of the line match.
        return rb"[^\n]*?"
    if before.endswith('"') and after.startswith('"'):
        return rb"[^\"\n]*"
    if after:
        return rb"[^" + re.escape(after[0].encode()) + rb"\n]*"
    return rb"[^\n]*"


def _request_parts(escape: str, with_path: bool) -> tuple[bytes, list[str]]:
    """$request captured as its method (and path without the query string) when well formed."""
    rest = rb"[^\"\n]*" if escape != "none" else rb"[^\n]*?"
    if with_path:
        return rb"(?:([A-Z]+) ([^ ?\"\n]*)" + rest + rb"|" + rest + rb")", ["method", "path"]
    return rb"(?:([A-Z]+) " + rest + rb"|" + rest + rb")", ["method"]


def _compile(log_format: LogFormat, fields: Fields) -> tuple[re.Pattern[bytes], list[str]]:
    """The line regex and, per capture group, the field it fills ("" for padding groups)."""
    wanted = {v: f for f, v in fields.variable.items() if v and v != "request"}
    from_request = [f for f, v in fields.variable.items() if v == "request"]
    tokens = list(log_format.tokens())
    parts: list[bytes] = [rb"^"]
    order: list[str] = []
    for index, (kind, value) in enumerate(tokens):
        if kind == "text":
            parts.append(re.escape(value.encode("utf-8")))
            continue
        before = tokens[index - 1][1] if index > 0 and tokens[index - 1][0] == "text" else ""
        following = tokens[index + 1] if index + 1 < len(tokens) else ("var", "")
        after = following[1] if following[0] == "text" else ""
        if value == "request" and from_request and "method" not in order:
            pattern, groups = _request_parts(log_format.escape, "path" in from_request)
            parts.append(pattern)
            order.extend(groups)
            continue
        field = wanted.get(value)
        pattern = _value_pattern(value, before, after, log_format.escape)
        if field is not None and field not in order:
            parts.append(rb"(" + pattern + rb")")
            order.append(field)
        else:
            parts.append(pattern)
    # findall returns bare values, not tuples, for fewer than two groups: pad with empty ones.
    while len(order) < 2:
        parts.append(rb"()")
        order.append("")
    parts.append(rb"$")
    return re.compile(b"".join(parts), re.MULTILINE), order
