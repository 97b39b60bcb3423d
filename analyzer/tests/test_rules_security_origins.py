"""X-origins: Origin/Referer regexes a foreign site satisfies, and the ones that hold."""

from __future__ import annotations

import pytest

from tests.rule_checks import run

SITE = """events {}
http {
    map $http_origin $cors_origin {
        default "";
%s
    }
    server {
        listen 80;
        location /api/ {
%s
            proxy_pass http://app;
        }
    }
}
"""


def in_location(line: str) -> str:
    """A config with `line` in the /api/ location (from line 10)."""
    return SITE % ("", line)


def in_map(entry: str) -> str:
    """A config with `entry` in the $http_origin map (line 5)."""
    return SITE % (entry, "")


def check(header: str, operator: str, regex: str) -> str:
    """An `if` testing header against regex, setting a CORS flag."""
    condition = f"            if ({header} {operator} {regex}) {{\n"
    return condition + "                set $cors 1;\n            }"


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        # No end anchor: the allowed name followed by the attacker's domain.
        (in_location(check("$http_origin", "~*", '"^https://shop\\.test"')), "shop.test.attacker"),
        # No start anchor on a referer: the allowed URL inside the attacker's path.
        (
            in_location(check("$http_referer", "!~", '"https://shop\\.test/"')),
            "attacker.example/https://shop.test/",
        ),
        # Unescaped dot before the registrable part: 'wwwxshop.test' is anyone's.
        (in_location(check("$http_origin", "~", '"^https://www.shop\\.test$"')), "wwwxshop.test"),
        # '.*' in front of the name: 'attackershop.test'.
        (
            in_location(check("$http_origin", "~*", '"^https?://.*shop\\.test$"')),
            "attackershop.test",
        ),
        # A second alternative without start anchor.
        (
            in_location(check("$http_origin", "~", '"^https://www\\.shop\\.test$|shop\\.test$"')),
            "attackershop.test",
        ),
        (in_map('        "~^https://(www\\.)?shop\\.test" $http_origin;'), "shop.test.attacker"),
    ],
)
def test_x_origins_fires_on_bypassable_regexes(text: str, accepted: str) -> None:
    [finding] = run("X-origins", text)
    assert finding.severity == "warning"
    values = finding.evidence["accepted"]
    assert isinstance(values, list)
    assert any(accepted in v for v in values), values


def test_x_origins_unescaped_tld_dot_is_info() -> None:
    text = in_location(check("$http_origin", "!~", '"^https://shop.test$"'))
    [finding] = run("X-origins", text)
    assert (finding.severity, finding.line) == ("info", 10)
    assert finding.evidence["accepted"] == ["https://shopxtest"]


@pytest.mark.parametrize(
    "text",
    [
        in_location(check("$http_origin", "~*", '"^https://(www\\.)?shop\\.test$"')),
        in_location(
            check("$http_origin", "~*", '"^https://([a-z0-9-]+\\.)?shop\\.test(:[0-9]+)?$"')
        ),
        in_location(check("$http_referer", "!~", '"^https://shop\\.test/"')),
        # Keyword deny-lists are not allow-lists.
        in_location(
            "            if ($http_referer ~* (casino|pills\\.example)) {\n"
            "                return 403;\n            }"
        ),
        in_location(check("$http_referer", "~*", "(casino|pills\\.example)")),
        # Another variable, or a plain comparison.
        in_location(check("$http_user_agent", "~*", '"^https://shop.test"')),
        in_location(check("$http_origin", "=", "https://shop.test")),
        in_map('        "~^https://(www\\.)?shop\\.test$" $http_origin;'),
        # Unanchored, but every host it accepts is still under shop.test.
        in_location(check("$http_origin", "~", '"^https://shop\\.test$|cdn\\.shop\\.test$"')),
        # A map entry that refuses is not an allow-list entry.
        in_map('        "~shop.test" "";'),
    ],
)
def test_x_origins_silent_on_sound_checks(text: str) -> None:
    assert run("X-origins", text) == []
