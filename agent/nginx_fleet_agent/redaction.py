"""Removing secrets from an `nginx -T` dump before it leaves the host."""

from __future__ import annotations

import posixpath
import re

from nginx_fleet_agent.nginx_syntax import Directive, DumpSection, Token, parse, split_dump, walk

REDACTED_VALUE = '"[redacted]"'
REDACTED_SECTION = "# [redacted by nginx-fleet-agent]\n"

_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
_SECRET_NAME = re.compile(r"auth|cookie|api[-_]?key|token|secret|passw|session|signature", re.I)
# A value that is only a variable (`$http_authorization`) passes a secret along without holding it.
_ONLY_VARIABLE = re.compile(r"\$(\w+|\{\w+\})")
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@", re.I)


def redact_dump(dump: str) -> str:
    """The dump with private keys, htpasswd files and secret directive values removed."""
    sections = split_dump(dump)
    if not sections:
        return redact_config_text(dump, parse(dump))
    trees = [parse(section.text) for section in sections]
    password_files = _htpasswd_paths(sections, trees)
    out: list[str] = []
    position = 0
    for section, tree in zip(sections, trees, strict=True):
        out.append(dump[position : section.start])
        text = redact_config_text(section.text, tree)
        if section.path in password_files or _PRIVATE_KEY.search(text):
            text = REDACTED_SECTION
        out.append(text)
        position = section.end
    out.append(dump[position:])
    return "".join(out)


def redact_config_text(text: str, tree: list[Directive]) -> str:
    """One file's text with the values of secret-bearing directives replaced in place."""
    replacements: dict[int, tuple[int, str]] = {}
    for directive in walk(tree):
        for token in _secret_arguments(directive):
            if not _ONLY_VARIABLE.fullmatch(token.text):
                replacements[token.start] = (token.end, REDACTED_VALUE)
        for token in directive.args:
            if token.start not in replacements and _URL_CREDENTIALS.search(token.text):
                cleaned = _URL_CREDENTIALS.sub(r"\g<scheme>[redacted]@", token.text)
                replacements[token.start] = (token.end, _quote(cleaned))
    for start in sorted(replacements, reverse=True):
        end, value = replacements[start]
        text = text[:start] + value + text[end:]
    return text


def _secret_arguments(directive: Directive) -> list[Token]:
    """The arguments of one directive that hold a secret."""
    name, args = directive.name, directive.args
    if name == "secure_link_secret" or name.startswith("auth_jwt_key"):
        return list(args)
    is_header = name.endswith("_set_header") or name in {"add_header", "add_trailer"}
    is_param = name.endswith("_param") or name == "set"
    if (is_header or is_param) and len(args) >= 2 and _SECRET_NAME.search(args[0].text):
        return [args[1]]
    if name.endswith("certificate_key"):
        return [token for token in args if token.text.startswith("data:")]
    return []


def _htpasswd_paths(sections: list[DumpSection], trees: list[list[Directive]]) -> set[str]:
    """Files named by `auth_basic_user_file`, resolved against nginx's conf prefix."""
    conf_prefix = posixpath.dirname(sections[0].path)
    paths = set()
    for tree in trees:
        for directive in walk(tree):
            if directive.name == "auth_basic_user_file" and directive.args:
                target = directive.args[0].text
                if "$" not in target:
                    paths.add(posixpath.normpath(posixpath.join(conf_prefix, target)))
    return paths


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
