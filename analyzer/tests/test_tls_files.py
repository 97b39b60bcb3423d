"""Which certificate files ssl_certificate names (src/event/ngx_event_openssl.c)."""

from __future__ import annotations

from nginx_fleet_analyzer.loader import parse_dump, parse_text
from nginx_fleet_analyzer.tls_files import CertificateFile, certificate_files, conf_prefix

DUMP = """# configuration file /etc/nginx/nginx.conf:
events {}
http {
    ssl_certificate /etc/ssl/default.pem;
    ssl_certificate_key /etc/ssl/default.key;
    server {
        listen 443 ssl;
        ssl_certificate certs/site.pem;
        ssl_certificate certs/site-ecdsa.pem;
        ssl_certificate_key certs/site.key;
    }
    server {
        listen 8443 ssl;
        ssl_certificate /etc/ssl/default.pem;
        ssl_certificate $ssl_server_name.pem;
        ssl_certificate "data:-----BEGIN CERTIFICATE-----MIIBszCCAVmgAwIBAgIUQk";
    }
}
stream { server { listen 9443 ssl; ssl_certificate /etc/ssl/stream.pem; } }
mail { ssl_certificate /etc/ssl/mail.pem; server { listen 993 ssl; protocol imap; } }
"""


def test_every_context_is_read_relative_paths_against_the_config_directory() -> None:
    found = certificate_files(parse_dump(DUMP))
    assert found == [
        CertificateFile("/etc/ssl/default.pem", None),
        CertificateFile("/etc/nginx/certs/site.pem", None),
        CertificateFile("/etc/nginx/certs/site-ecdsa.pem", None),
        CertificateFile("$ssl_server_name.pem", "the path holds variables (a file per handshake)"),
        CertificateFile(
            "data:-----BEGIN CERTIFICATE-----MIIBszCC",
            "the certificate is inline in the config (data:)",
        ),
        CertificateFile("/etc/ssl/stream.pem", None),
        CertificateFile("/etc/ssl/mail.pem", None),
    ]


def test_keys_are_never_listed() -> None:
    paths = [f.path for f in certificate_files(parse_dump(DUMP))]
    assert not any(path.endswith(".key") for path in paths)


def test_the_base_directory_can_be_given_and_is_unknown_for_a_file_read_alone() -> None:
    site = parse_text("server { listen 443 ssl; ssl_certificate site.pem; }", context="http")
    assert conf_prefix(site) is None
    assert certificate_files(site) == [
        CertificateFile("site.pem", "relative path and the config's directory is unknown")
    ]
    assert certificate_files(site, base_dir="/srv/conf") == [
        CertificateFile("/srv/conf/site.pem", None)
    ]
