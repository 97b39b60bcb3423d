"""Check a directive's arguments against the argument form and value kind of its table row."""

from __future__ import annotations

import re

from nginx_fleet_analyzer.directives import Spec

_SIZE = re.compile(r"\d+[kKmMgG]?")
_TIME = re.compile(r"(?:\d+(?:ms|[smhdwMy])?\s*)+")
_NUMBER = re.compile(r"\d+")
_COUNT_WORDS = {0: "no arguments", 1: "one argument", 2: "two arguments", 3: "three arguments"}


def describe_form(form: str) -> str:
    """Human words for an argument form: '12' -> 'one or two arguments'."""
    if form == "flag":
        return '"on" or "off"'
    if form == "*":
        return "any number of arguments"
    if form.endswith("+"):
        low = int(form[:-1])
        return f"at least {_COUNT_WORDS.get(low, f'{low} arguments')}"
    counts = [int(c) for c in form]
    if len(counts) == 1:
        return _COUNT_WORDS.get(counts[0], f"{counts[0]} arguments")
    return f"{counts[0]} to {counts[-1]} arguments"


def arity_ok(form: str, count: int) -> bool:
    """Whether `count` arguments fit the form."""
    if form == "*":
        return True
    if form == "flag":
        return count == 1
    if form.endswith("+"):
        return count >= int(form[:-1])
    return str(count) in form


def _kind_ok(kind: str, value: str) -> bool:
    if "$" in value:
        return True
    match kind:
        case "size":
            return _SIZE.fullmatch(value) is not None
        case "size_off":
            return value == "off" or _SIZE.fullmatch(value) is not None
        case "time":
            return value in ("epoch", "max", "off") or _TIME.fullmatch(value) is not None
        case "number":
            return _NUMBER.fullmatch(value) is not None
        case "auto_number":
            return value == "auto" or _NUMBER.fullmatch(value) is not None
    return True


_KIND_WORDS = {
    "size": "a size such as 512, 8k or 10m",
    "size_off": 'a size or "off"',
    "time": "a time such as 30, 30s, 500ms or 1h",
    "number": "a whole number",
    "auto_number": 'a whole number or "auto"',
}


def argument_problem(spec: Spec, name: str, args: list[str]) -> str | None:
    """What is wrong with these arguments for this directive, or None when they fit."""
    if not arity_ok(spec.args, len(args)):
        return (
            f'"{name}" takes {describe_form(spec.args)}, '
            f"but has {len(args)}: {' '.join(args) or '(none)'}"
        )
    if spec.args == "flag":
        if args[0].lower() not in ("on", "off"):
            return f'"{name}" must be "on" or "off", not "{args[0]}"'
        return None
    if not spec.kind or not args:
        return None
    checked = args if spec.args == "1" else args[:1]
    for value in checked:
        if not _kind_ok(spec.kind, value):
            return f'"{name}" expects {_KIND_WORDS[spec.kind]}, not "{value}"'
        if spec.bounds is not None and value.isdigit():
            low, high = spec.bounds
            if not low <= int(value) <= high:
                return f'"{name}" must be between {low} and {high}, not {value}'
    return None
