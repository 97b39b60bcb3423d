"""Secrets never leave the host: redaction of a real `nginx -T` dump and of odd sections."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from nginx_fleet_agent.collectors.nginx_config import snapshot_from_dump
from nginx_fleet_agent.payload import build_payload
from nginx_fleet_agent.redaction import REDACTED_SECTION, redact_dump
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
    assert f"# configuration file {conf}/keys.conf:\n{REDACTED_SECTION}" in dump
    assert f"# configuration file {conf}/htpasswd:\n{REDACTED_SECTION}" in dump
    assert 'proxy_set_header Authorization "[redacted]";' in dump
    assert 'add_header X-Auth-Token "[redacted]" always;' in dump
    assert '"http://[redacted]@127.0.0.1:9/ocsp"' in dump
    # What is not secret stays, so the backend can still analyse the config.
    assert "proxy_set_header Host $host;" in dump
    assert "proxy_set_header Proxy-Authorization $http_proxy_authorization;" in dump
    assert "auth_basic_user_file htpasswd;" in dump
    assert snapshot.hash == hashlib.sha256(dump.encode()).hexdigest()
    # The stub_status location is still found from the unredacted structure.
    assert sampler.stub_status.target is not None


def test_sections_that_nginx_would_dump_verbatim_are_dropped() -> None:
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
    assert redacted.count(REDACTED_SECTION) == 2
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
