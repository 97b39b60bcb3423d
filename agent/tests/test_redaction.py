"""Secrets never leave the host: redaction of a real `nginx -T` dump and of odd sections."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nginx_fleet_agent.collectors.nginx_config import snapshot_from_dump
from nginx_fleet_agent.collectors.stub_status import StubStatusCollector
from nginx_fleet_agent.nginx_command import NginxCommand
from nginx_fleet_agent.nginx_syntax import parse, split_dump, walk
from nginx_fleet_agent.payload import build_payload
from nginx_fleet_agent.redaction import REDACTED_SECTION, redact_config_text, redact_dump
from nginx_fleet_agent.sampler import Sampler

from tests.conftest import agent_config_for
from tests.nginx_instance import NginxInstance

SECRETS = [
    "x-secret-token-123",
    "s3cr3t-api-key",
    "cookie-secret",
    "add-header-secret",
    "link-secret-42",
    "fastcgi-secret",
    "set-secret",
    "stapler-password",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    "$apr1$Zx9Q2m4c$0123456789abcdefABCDEF",
]

SITE = """
server {
    listen 127.0.0.1:{port};
    set $api_token "set-secret";
    fastcgi_param HTTP_AUTHORIZATION "fastcgi-secret";
    ssl_stapling_responder http://stapler:stapler-password@127.0.0.1:9/ocsp;
    location = /nginx_status { stub_status; allow 127.0.0.1; deny all; }
    location /api/ {
        proxy_set_header Authorization "Bearer x-secret-token-123";
        proxy_set_header X-Api-Key s3cr3t-api-key;
        proxy_set_header Cookie 'session=cookie-secret';
        proxy_set_header Host $host;
        proxy_set_header Proxy-Authorization $http_proxy_authorization;
        add_header X-Auth-Token "add-header-secret" always;
        return 200;
    }
    location /private/ {
        auth_basic "closed";
        auth_basic_user_file htpasswd;
    }
    location /signed/ { secure_link_secret link-secret-42; }
}
include keys.conf;
include htpasswd;
"""

# Both files are valid nginx syntax (comments only), so nginx -T dumps them verbatim.
KEY_FILE = """# -----BEGIN PRIVATE KEY-----
# MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7
# -----END PRIVATE KEY-----
"""
HTPASSWD = "#alice:$apr1$Zx9Q2m4c$0123456789abcdefABCDEF\n"


def _instance(factory: Callable[..., NginxInstance]) -> NginxInstance:
    instance = factory(SITE, start=False)
    (instance.prefix / "conf" / "keys.conf").write_text(KEY_FILE)
    (instance.prefix / "conf" / "htpasswd").write_text(HTPASSWD)
    instance.start()
    return instance


def test_no_secret_reaches_the_payload(
    nginx_factory: Callable[..., NginxInstance], tmp_path: Path
) -> None:
    instance = _instance(nginx_factory)
    sampler = Sampler(agent_config_for(instance, tmp_path / "state"))
    try:
        snapshot = sampler.config
        assert snapshot is not None
        payload = build_payload(
            agent_id="a",
            hostname="h",
            labels={},
            samples=[{"seq": 1, **sampler.sample()}],
            facts=sampler.facts,
            config=snapshot,
            include_config_dump=True,
        )
    finally:
        sampler.close()
    body = json.dumps(payload)
    leaked = [secret for secret in SECRETS if secret in body]
    assert leaked == []
    dump = snapshot.dump
    conf = instance.prefix / "conf"
    # The key file keeps its lines (its BEGIN/END markers say what was there); htpasswd goes.
    assert (
        f"# configuration file {conf}/keys.conf:\n# -----BEGIN PRIVATE KEY-----\n"
        "# [redacted]\n# -----END PRIVATE KEY-----\n"
    ) in dump
    assert f"# configuration file {conf}/htpasswd:\n{REDACTED_SECTION}" in dump
    assert 'proxy_set_header Authorization "[redacted]";' in dump
    assert 'add_header X-Auth-Token "[redacted]" always;' in dump
    assert "ssl_stapling_responder http://[redacted]@127.0.0.1:9/ocsp;" in dump
    # What is not secret stays, so the backend can still analyse the config.
    assert "proxy_set_header Host $host;" in dump
    assert "proxy_set_header Proxy-Authorization $http_proxy_authorization;" in dump
    assert "auth_basic_user_file htpasswd;" in dump
    assert snapshot.hash == hashlib.sha256(dump.encode()).hexdigest()
    # The stub_status location is still found from the unredacted structure.
    assert sampler.stub_status.target is not None


def test_htpasswd_sections_are_dropped_and_key_files_lose_their_key_lines() -> None:
    dump = (
        "# configuration file /etc/nginx/nginx.conf:\n"
        "http { auth_basic_user_file /etc/nginx/.htpasswd; include /etc/nginx/x.pem; }\n\n"
        "# configuration file /etc/nginx/.htpasswd:\n"
        "bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n\n"
        "# configuration file /etc/nginx/x.pem:\n"
        "-----BEGIN RSA PRIVATE KEY-----\nAAAAsecretkeymaterial\n-----END RSA PRIVATE KEY-----\n\n"
    )
    redacted = redact_dump(dump)
    assert "W6ph5Mm5Pz8" not in redacted
    assert "secretkeymaterial" not in redacted
    assert redacted.count(REDACTED_SECTION) == 1
    assert "-----BEGIN RSA PRIVATE KEY-----\n[redacted]\n-----END RSA PRIVATE KEY-----" in redacted
    assert "auth_basic_user_file /etc/nginx/.htpasswd;" in redacted


def test_inline_key_data_is_redacted_but_the_file_kept() -> None:
    dump = (
        "# configuration file /etc/nginx/nginx.conf:\n"
        "http { server { listen 443 ssl;\n"
        "  ssl_certificate_key 'data:-----BEGIN PRIVATE KEY-----\\nQUJDsecret\\n"
        "-----END PRIVATE KEY-----';\n"
        "  ssl_password_file /etc/nginx/pass.txt; } }\n"
    )
    redacted = redact_dump(dump)
    assert "QUJDsecret" not in redacted
    assert 'ssl_certificate_key "[redacted]";' in redacted
    assert "ssl_password_file /etc/nginx/pass.txt;" in redacted


def test_hash_changes_only_with_the_redacted_text() -> None:
    base = "# configuration file /n.conf:\nhttp { proxy_set_header Authorization {}; }\n"
    first = snapshot_from_dump(base.replace("{}", "one"))
    second = snapshot_from_dump(base.replace("{}", "two"))
    # Rotating a secret must not look like a config change (nor reveal it through the hash).
    assert first.hash == second.hash


# An API gateway as deployed: tokens in maps, variables, headers and bodies, a key pasted into
# a string, leftovers in comments. Every value below that contains "LEAK" is a secret.
GATEWAY = """
map $http_x_api_key $api_client {
    default "";
    "sk_live_51LEAKqLyjWDarjtT1zdp7dcX" mobile;
    "partner-LEAK-7f3a9c" partner;
}
map $api_client $upstream_token {
    default "LEAK-default-upstream-token";
    mobile "LEAK-mobile-upstream-token";
}
server {
    listen 127.0.0.1:{port};
    server_name gateway.test;
    set $jwt_secret "LEAK-jwt-hs256-secret";
    set $upstream_pw "hunter2LEAK";
    set $key_passphrase "LEAKcorrecthorse";
    set $hmac_seed 'c2VjcmV0LUxFQUstaG1hYy1zZWVkLTEyMzQ1Njc4OTA=';
    set $signing_key "-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCLEAKpastedkeymaterial0001
LEAKsecondlineofthepastedkeymaterialAAAAAAAAAAAAAAAAAAAAAA
-----END PRIVATE KEY-----";
    location = /nginx_status {
        stub_status;
        allow 127.0.0.1;
        deny all;
    }
    location /api/ {
        if ($api_client = "") { return 401; }
        # proxy_set_header Authorization "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJMRUFLIn0.LEAKsig";
        # X-Api-Key: LEAKcommentedoutkey0123456789abcdefXYZ
        proxy_set_header X-Upstream-Token $upstream_token;
        proxy_set_header X-Client-Cert-Password "LEAK-cert-password";
        proxy_set_header X-Vendor-Ident "LEAKv3nd0rIdentKeyAbCdEfGhIjKlMnOp";
        proxy_set_header Host $host;
        proxy_pass http://127.0.0.1:9/;
    }
    location = /oauth/token {
        proxy_set_body '{"grant_type":"client_credentials","client_secret":"LEAK-oauth-secret"}';
        proxy_pass http://127.0.0.1:9/token?api_key=LEAK-query-key;
    }
    location = /login { return 302 "https://svc:LEAK-basic-pass@sso.example.com/login"; }
    location = /debug { return 200 'token=LEAK-debug-token\\n'; }
    location /private/ {
        auth_basic "staff";
        auth_basic_user_file staff.htpasswd;
    }
}
"""


def _gateway_dump(factory: Callable[..., NginxInstance]) -> tuple[NginxInstance, str]:
    """A running gateway nginx and its raw `nginx -T` output."""
    instance = factory(GATEWAY, start=False)
    (instance.prefix / "conf" / "staff.htpasswd").write_text("ops:{PLAIN}LEAK-htpasswd\n")
    instance.start()
    return instance, NginxCommand(args=instance.args).run("-T").stdout


def test_gateway_secrets_are_redacted_by_name_and_by_shape(
    nginx_factory: Callable[..., NginxInstance],
) -> None:
    _instance, raw = _gateway_dump(nginx_factory)
    assert raw.count("LEAK") >= 15
    dump = redact_dump(raw)
    leaked = [line.strip() for line in dump.splitlines() if "LEAK" in line]
    assert leaked == []
    for kept in (
        '"[redacted]" mobile;',
        'mobile "[redacted]";',
        'set $jwt_secret "[redacted]";',
        'set $upstream_pw "[redacted]";',
        'set $key_passphrase "[redacted]";',
        '# proxy_set_header Authorization "[redacted]"',
        "proxy_set_header X-Upstream-Token $upstream_token;",
        'proxy_set_header X-Client-Cert-Password "[redacted]";',
        '"client_secret":"[redacted]"',
        "proxy_pass http://127.0.0.1:9/token?api_key=[redacted];",
        'return 302 "https://[redacted]@sso.example.com/login";',
        "return 200 'token=[redacted]\\n';",
        "proxy_set_header Host $host;",
        'if ($api_client = "") { return 401; }',
        "auth_basic_user_file staff.htpasswd;",
    ):
        assert kept in dump, kept


def test_an_inline_key_costs_only_its_own_lines(
    nginx_factory: Callable[..., NginxInstance],
) -> None:
    _instance, raw = _gateway_dump(nginx_factory)
    dump = redact_dump(raw)
    site = next(s for s in split_dump(dump) if s.path.endswith("site.conf"))
    raw_site = next(s for s in split_dump(raw) if s.path.endswith("site.conf"))
    # Same lines, same directives: only the key's material lines changed.
    assert site.text.count("\n") == raw_site.text.count("\n")
    lines = list(zip(raw_site.text.splitlines(), site.text.splitlines(), strict=True))
    changed = [number for number, (before, after) in enumerate(lines) if before != after]
    key_at = next(n for n, (before, _) in enumerate(lines) if "$signing_key" in before)
    assert {key_at, key_at + 1, key_at + 2, key_at + 3} <= set(changed)
    assert "pastedkeymaterial" not in site.text
    assert lines[key_at][1] == '    set $signing_key "[redacted]'
    assert lines[key_at + 4] == ("    location = /nginx_status {",) * 2
    # Every directive is still there; only map keys that were secrets changed their name.
    names = [(d.name, after.name) for d, after in zip(
        walk(parse(raw_site.text)), walk(parse(site.text)), strict=True
    )]  # fmt: skip
    assert [(b, a) for b, a in names if b != a] == [
        ("sk_live_51LEAKqLyjWDarjtT1zdp7dcX", "[redacted]"),
        ("partner-LEAK-7f3a9c", "[redacted]"),
    ]


def test_redaction_is_deterministic_and_ignores_secret_rotation(
    nginx_factory: Callable[..., NginxInstance],
) -> None:
    _instance, raw = _gateway_dump(nginx_factory)
    first = snapshot_from_dump(raw)
    assert snapshot_from_dump(raw).hash == first.hash
    rotated = snapshot_from_dump(raw.replace("LEAK", "ROTATED"))
    assert rotated.dump == first.dump
    assert rotated.hash == first.hash


STATUS_BEHIND_BASIC_AUTH = """
    server {
        listen 127.0.0.1:{port};
        location = /nginx_status {
            stub_status;
            auth_basic "monitoring";
            auth_basic_user_file {htpasswd};
        }
    }
"""


@pytest.fixture
def status_behind_basic_auth(
    nginx_factory: Callable[..., NginxInstance],
) -> Iterator[NginxInstance]:
    """nginx whose stub_status asks for monitor / s3cret-pass."""
    # The workers run as nobody: the password file must be readable outside pytest's 0700 dirs.
    with tempfile.TemporaryDirectory(prefix="nf-htpasswd-") as directory:
        os.chmod(directory, 0o755)  # noqa: S103 - a test password nginx workers must read
        htpasswd = Path(directory) / "monitor.htpasswd"
        htpasswd.write_text("monitor:{PLAIN}s3cret-pass\n")
        htpasswd.chmod(0o644)
        instance = nginx_factory(STATUS_BEHIND_BASIC_AUTH.replace("{htpasswd}", str(htpasswd)))
        yield instance
        instance.stop()


def test_stub_status_credentials_are_used_but_never_sent(
    status_behind_basic_auth: NginxInstance, tmp_path: Path
) -> None:
    instance = status_behind_basic_auth
    url = f"http://monitor:s3cret-pass@127.0.0.1:{instance.port}/nginx_status"
    sampler = Sampler(agent_config_for(instance, tmp_path / "state", stub_status_url=url))
    try:
        sample = sampler.sample()
        payload = build_payload(
            agent_id="a",
            hostname="h",
            labels={},
            samples=[{"seq": 1, **sample}],
            config=sampler.config,
            include_config_dump=True,
        )
    finally:
        sampler.close()
    status = sample["stub_status"]
    assert status["available"] is True, status
    assert status["url"] == f"http://127.0.0.1:{instance.port}/nginx_status"
    body = json.dumps(payload)
    assert "s3cret-pass" not in body
    assert "monitor:" not in body.replace("monitor.htpasswd", "")


def test_wrong_stub_status_credentials_report_401_without_them(
    status_behind_basic_auth: NginxInstance,
) -> None:
    instance = status_behind_basic_auth
    collector = StubStatusCollector(
        f"http://monitor:wrong-pass@127.0.0.1:{instance.port}/nginx_status"
    )
    try:
        status = collector.collect()["stub_status"]
    finally:
        collector.close()
    assert status == {
        "available": False,
        "url": f"http://127.0.0.1:{instance.port}/nginx_status",
        "error": "HTTP 401",
    }


# Not one secret in here: everything must come through unchanged, or the backend would analyse
# a config that is not the host's.
NOTHING_SECRET = """
# Basic Settings
# token: see the vault, not this file
http {
    log_format main '$remote_addr "$request" token=$arg_token session=$cookie_session';
    limit_req_zone $binary_remote_addr zone=auth:10m rate=5r/s;
    ssl_session_cache shared:SSL:10m;
    ssl_session_timeout 1d;
    ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384;
    proxy_cache_path /var/cache/nginx/api levels=1:2 keys_zone=api_cache:50m inactive=1h;
    proxy_cache_key $scheme$proxy_host$request_uri;
    upstream auth { server auth-backend:9000 max_fails=3; keepalive 16; }
    server {
        listen 443 ssl http2;
        server_name login.example.com MyServiceProdEuWest1Primary2024.example.com;
        ssl_certificate /etc/ssl/certs/login.example.com-2026.pem;
        ssl_certificate_key /etc/ssl/private/login.example.com-2026.key;
        ssl_session_ticket_key /etc/nginx/ticket.key;
        ssl_password_file /etc/nginx/keys.pass;
        set $auth_ok 0;
        add_header Strict-Transport-Security "max-age=31536000; includeSubDomains" always;
        proxy_set_header Authorization $http_authorization;
        proxy_set_header X-Request-Id $request_id;
        root /var/www/SomeDir2024/AppBuildOutput;
        location = /auth { internal; proxy_pass http://auth/verify; }
        set $auth_backend auth-service.default.svc.cluster.local;
        set $token_endpoint /oauth/token;
        set $pwd_dir /var/www;
        add_header X-Token-Ttl 3600;
        proxy_set_header X-Auth-Request-Redirect $scheme://$host$request_uri;
        add_header Content-Security-Policy
            "script-src 'self' 'sha256-RFWPLDbv2BY+rCkDzsE+0fr8ylGr2R2faWMhq4lfEQc='";
        location / {
            auth_request /auth;
            if ($http_authorization = "") { return 401; }
            limit_req zone=auth burst=10 nodelay;
        }
    }
}
"""


def test_what_is_not_secret_is_left_exactly_as_it_was() -> None:
    assert redact_config_text(NOTHING_SECRET) == NOTHING_SECRET


# Secrets a hostile review found still leaving the host: in Lua code and in header names that
# end in "Pass". Every value containing "LEAK" is a secret.
CODE_AND_SHORT_NAMES = """
server {
    proxy_set_header X-Smtp-Pass mailpassLEAK99;
    access_by_lua_block {
        ngx.req.set_header("X-Internal-Auth", "int-auth-LEAK-42")
        local ok, err = red:auth("redisP4sswordLEAK")
    }
}
"""


def test_secrets_in_lua_code_and_pass_headers_are_redacted() -> None:
    redacted = redact_config_text(CODE_AND_SHORT_NAMES)
    assert "LEAK" not in redacted
    assert 'ngx.req.set_header("X-Internal-Auth", "[redacted]")' in redacted
    assert 'red:auth("[redacted]")' in redacted
    assert redacted.count("\n") == CODE_AND_SHORT_NAMES.count("\n")


def test_an_inline_key_on_the_certificate_key_line_stays_one_argument() -> None:
    line = (
        "ssl_certificate_key data:-----BEGIN PRIVATE KEY-----MIIEvQIBLEAK-----END PRIVATE KEY-----;"
    )
    redacted = redact_config_text(line)
    assert redacted == 'ssl_certificate_key "[redacted]";'
