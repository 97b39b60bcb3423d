"""Removing secrets from an `nginx -T` dump before it leaves the host.

Two kinds of rules, both deterministic (the config hash only changes when non-secret text does):
- by directive: the value of a directive or header whose name says it holds a secret, in live
  config and in commented-out directives alike (`"[redacted]"` replaces the whole value);
- by value shape, anywhere in the text: private-key blocks (only the key's lines), credentials
  in URLs (`user:pass@`), bearer/basic credentials, `secret=value` pairs, well-known key
  formats (sk_live_…, ghp_…, AKIA…, JWTs) and long random-looking strings (`[redacted]`
  replaces just the secret part).
Line structure is kept, so the backend's findings still point at the right lines.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections import Counter

from nginx_fleet_agent.nginx_syntax import (
    Directive,
    DumpSection,
    Token,
    comments,
    parse,
    split_dump,
    walk,
)

REDACTED = "[redacted]"
REDACTED_VALUE = f'"{REDACTED}"'
REDACTED_SECTION = "# [redacted by nginx-fleet-agent]\n"

# Names of headers, variables, parameters and directives that hold a secret.
_SECRET_NAME = re.compile(
    r"auth|cookie|api[-_]?key|(?:^|[-_$])(?:key|pw)(?:$|[-_])|token|secret|passw|passphrase|pwd|"
    r"session|signature|credential|jwt|hmac|bearer|private",
    re.I,
)
# Header, parameter and variable names: also a trailing "pass" (X-Smtp-Pass, $db_pass), which
# in a directive name means something else (proxy_pass).
_SECRET_FIELD_NAME = re.compile(rf"{_SECRET_NAME.pattern}|(?:^|[-_$])pass(?:$|[-_])", re.I)
# Directives named like secrets whose value is a path, a cache key or otherwise not secret.
_NOT_SECRET_DIRECTIVES = frozenset(
    {
        "auth_basic",
        "auth_basic_user_file",
        "auth_request",
        "auth_request_set",
        "auth_delay",
        "auth_http",
        "auth_http_header",
        "auth_http_pass_client_cert",
        "auth_http_timeout",
        "proxy_cache_key",
        "fastcgi_cache_key",
        "scgi_cache_key",
        "uwsgi_cache_key",
        "ssl_certificate_key",
        "proxy_ssl_certificate_key",
        "grpc_ssl_certificate_key",
        "uwsgi_ssl_certificate_key",
        "ssl_session_ticket_key",
        "ssl_password_file",
        "proxy_ssl_password_file",
        "grpc_ssl_password_file",
        "uwsgi_ssl_password_file",
        "ssl_session_cache",
        "ssl_session_timeout",
        "ssl_session_tickets",
        "proxy_pass_header",
        "proxy_hide_header",
        "proxy_ignore_headers",
        "proxy_cookie_domain",
        "proxy_cookie_path",
        "proxy_cookie_flags",
        "userid_name",
    }
)
# Directives whose whole value is secret although their name does not say so.
_SECRET_DIRECTIVES = frozenset({"secure_link_secret", "secure_link_md5"})
_DIRECTIVE_NAME = re.compile(r"[a-z][a-z0-9_]*")
# A value made of variables only passes a secret along without holding it.
_VARIABLE = re.compile(r"\$(\w+|\{\w+\})")
# Values too plain to be a secret (switches, small numbers): kept so `if` logic stays readable.
_TRIVIAL = re.compile(r"(?i)|[0-9]{1,3}|on|off|true|false|yes|no|none|null|-")
# Paths, DNS names (a dot and lowercase labels) and numbers with an optional unit.
_PLAIN_VALUE = re.compile(
    r"/[\w./-]*|[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::\d{1,5})?|\d{1,6}[kmgshdwyKMG]?"
)
# `map` entries that are not a source value: keep them as they are.
_MAP_KEYWORDS = frozenset({"default", "hostnames", "volatile", "include"})

_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN (?P<kind>[A-Z0-9 ]*)PRIVATE KEY-----(?P<body>.*?)"
    r"(?:-----END (?P=kind)PRIVATE KEY-----|\Z)",
    re.S,
)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)(?P<userinfo>[^/@\s\"']+)@", re.I)
_AUTH_SCHEME = re.compile(
    r"(?P<scheme>\b(?:bearer|basic|digest|token|apikey)\s+)(?P<value>[A-Za-z0-9._~+/=-]{6,})",
    re.I,
)
# `name=value` or `"name": "value"` where the name says secret: query strings, JSON and form
# bodies (`proxy_set_body`, `return`), `more_set_headers "X-Token: value"`. The name must not
# follow `=` or `:` so that `zone=auth:10m` stays as it is.
_SECRET_PAIR = re.compile(
    r"(?:^|(?<=[\s&?\"'{,;(]))"
    r"(?P<name>[A-Za-z0-9_-]*(?:secret|passw|pwd|token|api[-_]?key|apikey|access[-_]?key|"
    r"private[-_]?key|signature|credential|auth|session|jwt|hmac)[A-Za-z0-9_-]*)"
    r"(?P<sep>[\"']?\s*(?:=|:)\s*[\"']?)"
    r"(?P<value>[^\s\"'&;,}{)\\]+)",
    re.I,
)
# `set_header("X-Internal-Auth", "value")`: a string after a string that names a secret.
_CODE_NAMED_STRING = re.compile(
    r"(?P<lead>(?P<q1>[\"'])(?P<name>[\w-]*(?:auth|token|secret|passw|api[-_]?key|"
    r"credential|session|cookie)[\w-]*)(?P=q1)\s*,\s*(?P<q2>[\"']))(?P<value>[^\"'\n]+)(?P=q2)"
    r"(?!\s*:)",  # not the next key of a JSON object
    re.I,
)
# `red:auth("value")`, `set_password('value')`: a string passed to a call named after a secret.
_CODE_SECRET_CALL = re.compile(
    r"(?P<lead>[.:]\w*(?:auth|passw\w*|secret|token)\s*\(\s*(?P<q>[\"']))(?P<value>[^\"'\n]+)(?P=q)",
    re.I,
)
_KNOWN_KEY_FORMATS = re.compile(
    r"\b(?:"
    r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}"
    r"|whsec_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|glpat-[A-Za-z0-9_-]{16,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{30,}"
    r"|nf[eh]_[A-Za-z0-9_-]{16,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
    r")"
)
# Long runs of base64/hex-like characters; judged by _looks_random before being redacted.
# A label of a dotted name (host.example.com) is not a candidate: keys have no dots.
_RANDOM_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_+/=.-])[A-Za-z0-9_+/=-]{24,}(?![A-Za-z0-9_+/=.-])")
_HEX = re.compile(r"[0-9a-fA-F]+")


def redact_dump(dump: str) -> str:
    """The dump with private keys, htpasswd files and every recognised secret removed."""
    sections = split_dump(dump)
    if not sections:
        return redact_config_text(dump)
    password_files = _htpasswd_paths(sections, [parse(section.text) for section in sections])
    out: list[str] = []
    position = 0
    for section in sections:
        out.append(dump[position : section.start])
        if section.path in password_files:
            # Every line of an htpasswd file is a credential.
            out.append(REDACTED_SECTION)
        else:
            out.append(redact_config_text(section.text))
        position = section.end
    out.append(dump[position:])
    return "".join(out)


def redact_config_text(text: str) -> str:
    """One file's text with every recognised secret replaced, lines and directives kept."""
    text = _PRIVATE_KEY_BLOCK.sub(_redact_key_block, text)
    text = _redact_secret_directives(text)
    text = _redact_commented_directives(text)
    return _redact_by_shape(text)


def _redact_key_block(match: re.Match[str]) -> str:
    """A private key block with its BEGIN/END lines kept and every line between redacted."""
    lines = match.group("body").split("\n")
    kept = []
    for line in lines:
        prefix = re.match(r"[\s#]*", line)
        lead = prefix.group(0) if prefix else ""
        kept.append(lead + REDACTED if line[len(lead) :].strip() else line)
    end = match.group(0)[match.end("body") - match.start(0) :]
    return f"-----BEGIN {match.group('kind')}PRIVATE KEY-----" + "\n".join(kept) + end


def _redact_secret_directives(text: str) -> str:
    """Replace the values of directives, headers, variables and map entries that hold secrets."""
    replacements: dict[int, tuple[int, str]] = {}
    for directive in walk(parse(text)):
        for token in _secret_arguments(directive):
            if not _passes_along_only(token.text):
                replacements[token.start] = (token.end, _redacted_value(text, token))
    return _splice(text, replacements)


def _redacted_value(text: str, token: Token) -> str:
    """`"[redacted]"`, keeping the line breaks of a multi-line value so later lines keep
    their numbers."""
    breaks = text.count("\n", token.start, token.end)
    return f'"{REDACTED}' + "\n" * breaks + '"' if breaks else REDACTED_VALUE


def _redact_commented_directives(text: str) -> str:
    """Apply the directive rules to commented-out directives (`# proxy_set_header …`) too."""
    replacements: dict[int, tuple[int, str]] = {}
    for comment in comments(text):
        if not _looks_like_directive(comment.text):
            continue
        body_start = comment.start + 1
        redacted = _redact_secret_directives(comment.text)
        if redacted != comment.text:
            replacements[body_start] = (comment.end, redacted)
    return _splice(text, replacements)


def _looks_like_directive(comment: str) -> bool:
    """A comment that reads as a disabled directive rather than prose."""
    body = comment.strip().lstrip("#").strip()
    name = body.split(maxsplit=1)[0] if body else ""
    if not _DIRECTIVE_NAME.fullmatch(name):
        return False
    return body.endswith((";", "{", "}")) or _is_header_or_param(name) or name == "map"


def _is_header_or_param(name: str) -> bool:
    """Directives whose first argument names what the second one holds."""
    return name.endswith(("_set_header", "_param")) or name in {"add_header", "add_trailer", "set"}


def _redact_by_shape(text: str) -> str:
    """Replace secrets recognised by their shape wherever they appear."""
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    text = _AUTH_SCHEME.sub(_redact_credential, text)
    text = _SECRET_PAIR.sub(_redact_pair, text)
    for code in (_CODE_NAMED_STRING, _CODE_SECRET_CALL):
        text = code.sub(_redact_code_string, text)
    text = _KNOWN_KEY_FORMATS.sub(REDACTED, text)
    return _RANDOM_CANDIDATE.sub(
        lambda m: REDACTED if _looks_random(m.group(0)) else m.group(0), text
    )


def _redact_credential(match: re.Match[str]) -> str:
    """`Bearer <credential>` with the credential redacted; prose (`# Basic Settings`) is kept:
    a credential has a digit or punctuation, or is long."""
    value = match.group("value")
    if len(value) < 20 and not re.search(r"[0-9+/=._~-]", value):
        return match.group(0)
    return match.group("scheme") + REDACTED


def _redact_code_string(match: re.Match[str]) -> str:
    """A string literal of code with its content redacted, quotes kept."""
    if match.group("value").startswith(("$", REDACTED)):
        return match.group(0)
    quote = match.group(0)[-1]
    return match.group("lead") + REDACTED + quote


def _redact_pair(match: re.Match[str]) -> str:
    """`name=value` with the value redacted, unless the value only refers to a variable, is
    redacted already, or is too plain to be a secret (a port, a size, a switch)."""
    value, sep = match.group("value"), match.group("sep")
    plain = _TRIVIAL.fullmatch(value) or re.fullmatch(r"\d+[kmgshdwyKMG]?", value)
    if value.startswith(("$", REDACTED)) or plain:
        return match.group(0)
    # An unquoted `name: word` is as often prose in a comment ("token: see the vault").
    prose = ":" in sep and not re.search("[\"']", sep)
    if prose and len(value) < 12 and not re.search(r"[0-9+/=._~-]", value):
        return match.group(0)
    return match.group("name") + sep + REDACTED


def _looks_random(word: str) -> bool:
    """True for keys and tokens: long, mixed character classes, high entropy; not a path."""
    if word.startswith("/") or "//" in word or word.startswith("["):
        return False
    if word.startswith(("sha256-", "sha384-", "sha512-")):
        return False  # a Content-Security-Policy hash of a public script
    if _HEX.fullmatch(word):
        return len(word) >= 32 and any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
    if not (
        any(c.islower() for c in word)
        and any(c.isupper() for c in word)
        and any(c.isdigit() for c in word)
    ):
        return False
    threshold = 4.0 if "/" in word else 3.5
    return _entropy(word) >= threshold


def _entropy(word: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(word)
    return -sum(n / len(word) * math.log2(n / len(word)) for n in counts.values())


def _passes_along_only(value: str) -> bool:
    """A value that holds no secret: only variables (and URL punctuation between them), an
    absolute path, a DNS name, a number or a switch."""
    literal = _VARIABLE.sub("", value)
    return bool(
        _TRIVIAL.fullmatch(value)
        or (literal != value and re.fullmatch(r"[:/?&=#.,@\s-]*", literal))
        or _PLAIN_VALUE.fullmatch(value)
    )


def _secret_arguments(directive: Directive) -> list[Token]:
    """The tokens of one directive that hold a secret (for `map`, its entries' tokens)."""
    name, args = directive.name, directive.args
    if name == "map" and directive.block is not None and len(args) >= 2:
        return _secret_map_entries(directive)
    if name.endswith("certificate_key"):
        # `data:` and everything after it is the key, however many words it was split into.
        first = next((i for i, token in enumerate(args) if token.text.startswith("data:")), None)
        if first is None:
            return []
        return [Token(" ".join(t.text for t in args[first:]), args[first].start, args[-1].end)]
    if _is_header_or_param(name):
        if len(args) >= 2 and _SECRET_FIELD_NAME.search(args[0].text):
            return [args[1]]
        return []
    if name in _SECRET_DIRECTIVES:
        return list(args)
    if name in _NOT_SECRET_DIRECTIVES or not _SECRET_NAME.search(name):
        return []
    # secure_link_secret, auth_jwt_key_*, third-party keys (aws_secret_key, …); a path names
    # where a secret is, which the backend may analyse.
    return [token for token in args if not token.text.startswith("/")]


def _secret_map_entries(directive: Directive) -> list[Token]:
    """Keys of a map reading a secret (`$http_x_api_key`), values of a map making one."""
    source, target = directive.args[0].text, directive.args[1].text
    secret_keys = bool(_SECRET_FIELD_NAME.search(source))
    secret_values = bool(_SECRET_FIELD_NAME.search(target))
    found: list[Token] = []
    for entry in directive.block or []:
        if entry.name in _MAP_KEYWORDS:
            if entry.name == "default" and secret_values:
                found.extend(entry.args)
            continue
        if secret_keys:
            found.append(entry.name_token)
        if secret_values:
            found.extend(entry.args)
    return found


def _splice(text: str, replacements: dict[int, tuple[int, str]]) -> str:
    """text with each span [start, end) replaced, applied from the end."""
    for start in sorted(replacements, reverse=True):
        end, value = replacements[start]
        text = text[:start] + value + text[end:]
    return text


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
