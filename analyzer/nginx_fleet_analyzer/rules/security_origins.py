"""Origin and Referer allow-lists written as regexes that a foreign site can satisfy."""

from __future__ import annotations

from collections.abc import Iterator

from nginx_fleet_analyzer.findings import Category, Finding, Severity
from nginx_fleet_analyzer.model import Directive
from nginx_fleet_analyzer.record import Record
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._places import once_per_place
from nginx_fleet_analyzer.rules._regex import Regex, parse_regex, samples
from nginx_fleet_analyzer.rules._support import make_fix
from nginx_fleet_analyzer.rules._variables import if_condition

TYPE_CHECKING = False  # not typing's: see record.py
if TYPE_CHECKING:
    from urllib.parse import SplitResult

_CHECKED = {"$http_origin": "Origin", "$http_referer": "Referer"}
# A domain nobody here owns, standing for the attacker's.
_EVIL = "attacker.example"
# Second-level labels under which registries sell names (co.uk, com.au, ...).
_SHARED_SLD = frozenset({"co", "com", "net", "org", "gov", "edu", "ac"})


class _Bypass(Record):
    """A value the regex accepts although it does not come from the intended site."""

    __slots__ = ("registrable", "value")

    value: str
    registrable: bool

    def __init__(self, value: str, registrable: bool) -> None:
        self.value = value
        self.registrable = registrable


def _registrable(host: str) -> str:
    labels = host.strip(".").split(".")
    keep = 3 if len(labels) >= 3 and labels[-2] in _SHARED_SLD and len(labels[-1]) == 2 else 2
    return ".".join(labels[-keep:])


def _urlsplit(value: str) -> SplitResult:
    """urllib.parse.urlsplit, imported on first use: urllib.parse (with its named tuples) costs
    every CLI run ~1.5 ms, and only configs that check Origin or Referer with a regex need it."""
    from urllib.parse import urlsplit as split

    return split(value)


def _host_of(value: str) -> str | None:
    try:
        host = _urlsplit(value).hostname
    except ValueError:
        return None
    return host if host and "." in host.strip(".") else None


def _candidates(sample: str, header: str) -> list[str]:
    parts = _urlsplit(sample)
    host = parts.hostname or ""
    scheme = parts.scheme
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return []
    rest = sample.split(parts.netloc, 1)[1] if parts.netloc else ""
    values = [
        f"{scheme}://{host}.{_EVIL}{port}{rest}",
        f"{scheme}://{_EVIL.split('.')[0]}{host.lstrip('.')}{port}{rest}",
    ]
    for position, char in enumerate(host):
        if char == ".":
            values.append(f"{scheme}://{host[:position]}x{host[position + 1 :]}{port}{rest}")
    if header == "Referer":
        values.append(f"https://{_EVIL}/{sample}")
    return values


def bypasses(regex: Regex, header: str) -> list[_Bypass]:
    """Values from foreign hosts the regex accepts, found by trying its own samples mutated."""
    found: dict[str, _Bypass] = {}
    for sample in samples(regex):
        if "://" not in sample:
            # An unanchored domain pattern ('example\.com/'): try it inside a whole URL.
            sample = f"https://{sample.lstrip('/')}"
            if not regex.search(sample):
                continue
        host = _host_of(sample)
        if host is None:
            continue
        intended = _registrable(host)
        for value in _candidates(sample, header):
            other = _host_of(value) or (_urlsplit(value).hostname or "")
            if not other or _registrable(other) == intended or not regex.search(value):
                continue
            found.setdefault(value, _Bypass(value, "." in other))
    return list(found.values())


def _deny_list(node: Directive, operator: str) -> bool:
    """A positive match that rejects: `if ($http_referer ~* spam) { return 403; }` lists the bad."""
    if operator.startswith("!"):
        return False
    for child in node.block or []:
        if child.name == "deny":
            return True
        if child.name == "return" and child.args[:1] and child.args[0].isdigit():
            return int(child.args[0]) >= 400
    return False


def _validates(pattern: str) -> bool:
    """Whether a pattern reads as a site check (anchored or spelling a scheme), not keywords."""
    return "^" in pattern or "://" in pattern.replace("\\/", "/")


def _regexes(node: Directive) -> Iterator[tuple[Directive, str, Regex]]:
    """(anchor, header, regex) for allow-list regexes on Origin/Referer in an if or a map."""
    if node.name == "if":
        words = if_condition(node)
        checked = len(words) == 3 and words[0] in _CHECKED
        if checked and words[1] in ("~", "~*", "!~", "!~*") and _validates(words[2]):
            regex = None if _deny_list(node, words[1]) else parse_regex(words[2], "*" in words[1])
            if regex is not None:
                yield node, _CHECKED[words[0]], regex
    elif node.name == "map" and node.args[:1] == ["$http_origin"]:
        for entry in node.block or []:
            if not entry.name.startswith("~") or not entry.args:
                continue
            if entry.args[0] in ("", "0", "off", "no", "false"):
                continue
            regex = parse_regex(entry.name.lstrip("~*"), entry.name.startswith("~*"))
            if regex is not None:
                yield entry, "Origin", regex


@rule("X-origins", Category.SECURITY, Severity.WARNING)
@once_per_place
def check_origins(ctx: RuleContext) -> Iterator[Finding]:
    """An Origin/Referer check whose regex also accepts other sites (unescaped dot, no anchor)."""
    for node in [*ctx.config.find("if"), *ctx.config.find("map")]:
        for anchor, header, regex in _regexes(node):
            found = bypasses(regex, header)
            if not found:
                continue
            serious = [b for b in found if b.registrable]
            shown = (serious or found)[:3]
            yield get_rule("X-origins").finding(
                at=anchor,
                severity=None if serious else Severity.INFO,
                directive="if" if anchor.name == "if" else "map",
                message=(
                    f"the {header} check {regex.source} also accepts "
                    + ", ".join(f'"{b.value}"' for b in shown)
                    + (
                        ": a site anyone can register passes it"
                        if serious
                        else " (an unescaped dot; not a registrable name, but escape it)"
                    )
                ),
                evidence={
                    "regex": regex.source,
                    "header": header,
                    "accepted": [b.value for b in found],
                },
                fix=make_fix(
                    "none",
                    anchor.name,
                    anchor.args,
                    anchor,
                    r"anchor both ends (^https://(www\.)?example\.com$) and escape every dot",
                ),
            )
