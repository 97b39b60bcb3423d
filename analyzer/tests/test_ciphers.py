"""Cipher strings expanded by OpenSSL, and S-ciphers judging the expansion both ways."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest
from nginx_fleet_analyzer.ciphers import _LEGACY, _legacy_enabled, expand
from nginx_fleet_analyzer.facts import HostFacts

from tests.rule_checks import run

TLS = """events {}
http {
    ssl_certificate /etc/ssl/site.pem;
    ssl_certificate_key /etc/ssl/site.key;
    server {
        listen 443 ssl;
        ssl_ciphers '%s';
    }
}
"""
OPENSSL_3 = HostFacts(openssl_version=(3, 0, 11))
OPENSSL_1 = HostFacts(openssl_version=(1, 1, 1))


def names(spec: str) -> set[str]:
    return {s.name for s in expand(spec).suites}


def test_expansion_comes_from_openssl_and_leaves_tls13_out() -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.set_ciphers("EECDH+AESGCM:@SECLEVEL=0")
    expected = {str(c["name"]) for c in context.get_ciphers() if c["protocol"] != "TLSv1.3"}
    assert names("EECDH+AESGCM") == expected
    assert "ECDHE-RSA-AES128-GCM-SHA256" in expected
    assert not any(n.startswith("TLS_") for n in names("ALL"))


def test_expansion_is_cached_per_string() -> None:
    assert expand("HIGH:!aNULL") is expand("HIGH:!aNULL")


def test_not_des_keeps_3des_and_nginx_default_is_clean() -> None:
    # '!DES' names single DES only: 3DES suites of OpenSSL 1.1.1 stay enabled.
    weak = expand("ALL:!DES").weak()
    assert "DES-CBC3-SHA" in weak["3DES"]
    assert "DES" not in weak
    assert "3DES" not in expand("ALL:!3DES").weak()
    assert expand("HIGH:!aNULL:!MD5").weak() == {}


def test_all_without_export_still_has_anonymous_and_3des() -> None:
    weak = expand("ALL:!EXPORT").weak()
    assert "EXPORT" not in weak
    assert {"aNULL", "3DES", "RC4"} <= set(weak)
    assert "ADH-AES128-SHA" in weak["aNULL"]


def test_aliases_kedh_default_strength_and_plus() -> None:
    # kEDH includes anonymous DH; EDH does not.
    assert "ADH-AES128-SHA" in names("kEDH")
    assert "ADH-AES128-SHA" not in names("EDH")
    assert expand("DEFAULT").weak() == {}
    # @STRENGTH sorts, it neither adds nor removes.
    assert names("ALL:@STRENGTH") == names("ALL")
    # '+RC4' only moves suites already enabled: alone it enables nothing anywhere.
    assert not expand("+RC4").accepted
    assert _legacy_enabled("+RC4") == []
    assert "RC4" not in expand("HIGH:+RC4").weak()
    # '-' deletes for now, '!' for good.
    assert "DES-CBC3-SHA" in expand("HIGH:-3DES:3DES").legacy
    assert "DES-CBC3-SHA" not in expand("HIGH:!3DES:3DES").legacy


def test_legacy_model_agrees_with_openssl_where_openssl_has_the_suite() -> None:
    # The replay's rules checked against real suites with the same kinds of aliases.
    for spec in ("ALL:!aNULL", "aNULL", "kEDH+aNULL", "ALL:-aNULL:ADH", "DEFAULT"):
        assert ("ADH-AES128-SHA" in names(spec)) == ("ADH-AES128-SHA" in _replay(spec)), spec


def _replay(spec: str) -> list[str]:
    """The replay on a stand-in suite with ADH-AES128-SHA's aliases."""
    aliases, families = _LEGACY["ADH-DES-CBC3-SHA"]
    _LEGACY["ADH-AES128-SHA"] = (aliases - {"3DES", "MEDIUM"} | {"ADH-AES128-SHA"}, families)
    try:
        return _legacy_enabled(spec)
    finally:
        del _LEGACY["ADH-AES128-SHA"]


@pytest.mark.parametrize(
    "spec",
    [
        "HIGH:!aNULL:!MD5",
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305",
        "EECDH+AESGCM:EDH+AESGCM",
        "DEFAULT",
        "ALL:!aNULL:!eNULL:!EXPORT:!DES:!RC4:!3DES:!MD5:!PSK",
    ],
)
def test_s_ciphers_silent_on_sound_strings(spec: str) -> None:
    assert run("S-ciphers", TLS % spec) == []
    assert run("S-ciphers", TLS % spec, OPENSSL_1) == []


def test_s_ciphers_names_the_offending_suites() -> None:
    [finding] = run("S-ciphers", TLS % "HIGH:!MD5")
    assert (finding.severity, finding.line) == ("error", 7)
    assert finding.evidence["weak"] == ["aNULL"]
    assert "ADH-AES256-GCM-SHA384" in finding.message
    assert "AECDH-AES128-SHA" in finding.evidence["suites"]["aNULL"]  # type: ignore[index]
    [finding] = run("S-ciphers", TLS % "HIGH:!aNULL:NULL-MD5")
    assert finding.evidence["weak"] == ["MD5", "NULL"]
    assert "NULL-MD5" in finding.message


def test_s_ciphers_legacy_suites_depend_on_the_hosts_openssl() -> None:
    spec = "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-DES-CBC3-SHA"
    [unknown] = run("S-ciphers", TLS % spec)
    assert unknown.severity == "warning"
    assert "ECDHE-RSA-DES-CBC3-SHA" in unknown.message
    assert "OpenSSL version" in unknown.message
    [old] = run("S-ciphers", TLS % spec, OPENSSL_1)
    assert (old.severity, old.evidence["weak"]) == ("error", ["3DES"])
    # OpenSSL 3 has no 3DES suite: the string only enables the sound one.
    assert run("S-ciphers", TLS % spec, OPENSSL_3) == []


def test_s_ciphers_string_matching_nothing_fails_nginx() -> None:
    [finding] = run("S-ciphers", TLS % "TLS_AES_128_GCM_SHA256")
    assert (finding.severity, finding.evidence["accepted"]) == ("error", False)
    assert "no cipher match" in finding.message
    # RC4 alone: rejected by OpenSSL 3 (nginx -t fails), weak on older OpenSSL.
    [finding] = run("S-ciphers", TLS % "RC4-SHA", OPENSSL_3)
    assert (finding.severity, finding.evidence["accepted"]) == ("error", False)
    [finding] = run("S-ciphers", TLS % "RC4-SHA")
    assert finding.evidence["weak"] == ["RC4"]
    assert "nginx -t fails there" in finding.message


def test_s_ciphers_unused_bad_string_is_a_warning() -> None:
    # nginx applies ssl_ciphers only where a server has a certificate: nginx -t passes.
    text = (
        "events {}\nhttp {\n    ssl_ciphers NOSUCH;\n    server {\n        listen 80;\n    }\n}\n"
    )
    [finding] = run("S-ciphers", text)
    assert finding.severity == "warning"


NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
SITE = """error_log logs/error.log;
pid logs/nginx.pid;
events {}
http {
    server {
        listen 127.0.0.1:8443 ssl;
        ssl_certificate site.pem;
        ssl_certificate_key site.key;
        ssl_ciphers '%s';
    }
}
"""


@pytest.mark.skipif(
    not (os.path.exists(NGINX) and shutil.which("openssl")), reason="needs nginx and openssl"
)
@pytest.mark.parametrize(
    "spec",
    ["ALL:!DES", "HIGH:!aNULL:!MD5", "NULL-MD5", "NOSUCH", "RC4-SHA", "TLS_AES_128_GCM_SHA256"],
)
def test_accepted_is_what_the_real_nginx_says(tmp_path: Path, spec: str) -> None:
    # Same OpenSSL library as this Python: nginx -t fails exactly when nothing is selected.
    (tmp_path / "logs").mkdir()
    conf = tmp_path / "conf"
    conf.mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=test", "-keyout", conf / "site.key", "-out", conf / "site.pem"],
        check=True, capture_output=True,
    )  # fmt: skip
    (conf / "nginx.conf").write_text(SITE % spec)
    result = subprocess.run(
        [NGINX, "-t", "-p", str(tmp_path), "-c", "conf/nginx.conf"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (result.returncode == 0) == expand(spec).accepted, result.stderr
    if not expand(spec).accepted:
        assert "SSL_CTX_set_cipher_list" in result.stderr


OVERRIDDEN = """events {}
http {
    ssl_ciphers 'ALL:!DES';
    server {
        listen 443 ssl;
        ssl_certificate /etc/ssl/site.pem;
        ssl_certificate_key /etc/ssl/site.key;
        ssl_ciphers '%s';
    }
    server {
        listen 80;
    }
}
"""


def test_s_ciphers_http_list_overridden_by_every_tls_server_is_info() -> None:
    [finding] = run("S-ciphers", OVERRIDDEN % "HIGH:!aNULL:!MD5")
    assert (finding.severity, finding.line) == ("info", 3)
    assert "no TLS server uses it" in finding.message
    # A TLS server inheriting it makes it an error again.
    inherited = OVERRIDDEN.replace("        ssl_ciphers '%s';\n", "")
    [finding] = run("S-ciphers", inherited)
    assert (finding.severity, finding.line) == ("error", 3)
