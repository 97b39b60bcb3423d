"""Rules as a YAML file: the shipped defaults, export and import (channels named, not numbered)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import yaml
from pydantic import ValidationError

from app.alerts.schemas import RuleWrite

DURATION = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
# File field -> API field, for the durations the file writes as "2m", "1h".
DURATION_FIELDS = {
    "window": "window_s",
    "for": "for_s",
    "keep_firing": "keep_firing_s",
    "repeat_interval": "repeat_interval_s",
}
MAX_FILE_RULES = 500


class RulesFileError(ValueError):
    """The file is not a valid rules file; the message names the rule and field."""


def parse_duration(value: object) -> int:
    """Seconds from 90, "90s", "2m", "1h" or "1d"."""
    if isinstance(value, bool):
        raise ValueError("must be a duration such as 30s, 2m, 1h")
    if isinstance(value, int):
        return value
    match = DURATION.match(str(value))
    if match is None:
        raise ValueError(f"{value!r} is not a duration such as 30s, 2m, 1h")
    return int(match.group(1)) * UNIT_S[match.group(2)]


def format_duration(seconds: int) -> str:
    """The shortest exact form: 3600 -> "1h", 90 -> "90s"."""
    for unit in ("d", "h", "m"):
        if seconds and seconds % UNIT_S[unit] == 0:
            return f"{seconds // UNIT_S[unit]}{unit}"
    return f"{seconds}s"


def _rule_from_file(
    entry: Mapping[str, Any], channel_ids: Mapping[str, int], where: str
) -> RuleWrite:
    """One rule of the file as the API's RuleWrite."""
    body = dict(entry)
    for name, api_name in DURATION_FIELDS.items():
        if name in body:
            value = body.pop(name)
            try:
                body[api_name] = None if value is None else parse_duration(value)
            except ValueError as error:
                raise RulesFileError(f"{where}.{name}: {error}") from None
    names = body.pop("channels", []) or []
    if not isinstance(names, list):
        raise RulesFileError(f"{where}.channels: must be a list of channel names")
    unknown = [str(n) for n in names if n not in channel_ids]
    if unknown:
        raise RulesFileError(f"{where}.channels: no channel named {', '.join(unknown)}")
    body["channel_ids"] = [channel_ids[n] for n in names]
    try:
        return RuleWrite.model_validate(body)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'rule'}: {e['msg']}" for e in error.errors()
        )
        raise RulesFileError(f"{where}: {problems}") from None


def parse_rules(text: str, channel_ids: Mapping[str, int]) -> list[RuleWrite]:
    """Every rule of a rules file, or RulesFileError naming the first problem."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise RulesFileError(f"not valid YAML: {error}") from None
    if not isinstance(document, dict) or not isinstance(document.get("rules"), list):
        raise RulesFileError("the file must be a mapping with a `rules` list")
    entries = document["rules"]
    if len(entries) > MAX_FILE_RULES:
        raise RulesFileError(f"at most {MAX_FILE_RULES} rules per file")
    rules: list[RuleWrite] = []
    for index, entry in enumerate(entries):
        where = f"rules[{index}]"
        if not isinstance(entry, dict):
            raise RulesFileError(f"{where}: must be a mapping")
        rules.append(_rule_from_file(entry, channel_ids, where))
    keys = [rule.key for rule in rules]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise RulesFileError(f"rule keys used twice: {', '.join(duplicates)}")
    return rules


def dump_rules(rules: Sequence[RuleWrite], channel_names: Mapping[int, str]) -> str:
    """The rules as a file that parse_rules reads back to the same rules."""
    entries = []
    for rule in rules:
        body = rule.model_dump(exclude={"channel_ids"})
        for name, api_name in DURATION_FIELDS.items():
            value = body.pop(api_name)
            if value is not None:
                body[name] = format_duration(value)
        body["channels"] = [channel_names[i] for i in rule.channel_ids if i in channel_names]
        entries.append({k: v for k, v in body.items() if v is not None})
    return yaml.safe_dump({"rules": entries}, sort_keys=False, allow_unicode=True)


def default_rules() -> list[RuleWrite]:
    """The rules shipped with nginx-fleet."""
    text = resources.files("app.alerts").joinpath("default_rules.yaml").read_text("utf-8")
    return parse_rules(text, {})
