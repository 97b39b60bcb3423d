"""TLS certificates in the facts: read from the certificate files only, never a key."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from nginx_fleet_agent import defaults
from nginx_fleet_agent.collectors.tls_certificates import (
    TlsCertificateCollector,
    read_certificate,
)
from nginx_fleet_agent.sampler import Sampler
from nginx_fleet_analyzer.loader import parse_text

from tests.certificates import Made, key_fragments, make_certificate, write_pair
from tests.conftest import agent_config_for
from tests.nginx_instance import NginxInstance, free_port

# Paths this process opens while recording: an audit hook sees builtins.open, io.open and
# os.open alike. Hooks cannot be removed, so one is installed and switched on per test.
_opened: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _opened is not None and isinstance(args[0], str | bytes):
        _opened.append(args[0].decode() if isinstance(args[0], bytes) else args[0])


sys.addaudithook(_audit)


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """Every path this process opens during the test."""
    global _opened
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def expected(path: Path, made: Made, cn: str, names: list[str]) -> dict[str, Any]:
    return {
        "path": str(path),
        "subject": f"CN={cn},O=Test Org,C=US",
        "issuer": f"CN={cn},O=Test Org,C=US",
        "not_before": rfc3339(made.not_before),
        "not_after": rfc3339(made.not_after),
        "dns_names": names,
        "error": None,
    }


def test_the_leaf_is_described_with_rfc_4514_names_and_rfc_3339_dates(tmp_path: Path) -> None:
    leaf = make_certificate("leaf.test", ["leaf.test", "www.leaf.test"], days=10)
    chain = make_certificate("intermediate.test", [], days=900)
    path = tmp_path / "fullchain.pem"
    path.write_bytes(leaf.cert_pem + chain.cert_pem)
    assert read_certificate(str(path)) == expected(
        path, leaf, "leaf.test", ["leaf.test", "www.leaf.test"]
    )


def test_a_combined_file_passes_only_certificate_blocks_to_the_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = make_certificate("combined.test", ["combined.test"])
    path = tmp_path / "combined.pem"
    # The key first, as some tools write it: the first CERTIFICATE block is still the leaf.
    path.write_bytes(made.key_pem + made.cert_pem)
    parsed: list[bytes] = []
    real_load = x509.load_pem_x509_certificate

    def spy(data: bytes, *args: Any) -> x509.Certificate:
        parsed.append(bytes(data))
        return real_load(data, *args)

    monkeypatch.setattr(x509, "load_pem_x509_certificate", spy)
    entry = read_certificate(str(path))
    assert entry == expected(path, made, "combined.test", ["combined.test"])
    assert parsed == [made.cert_pem.strip()]
    text = json.dumps(entry)
    assert all(fragment not in text for fragment in key_fragments(made.key_pem))


def test_files_without_a_usable_certificate_get_an_error_and_no_dates(tmp_path: Path) -> None:
    made = make_certificate("k.test", [])
    key_only = tmp_path / "key-only.pem"
    key_only.write_bytes(made.key_pem)
    broken = tmp_path / "broken.pem"
    broken.write_bytes(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    huge = tmp_path / "huge.pem"
    huge.write_bytes(made.cert_pem + b"#" * defaults.TLS_CERTIFICATE_MAX_BYTES)
    cases = {
        key_only: "no PEM CERTIFICATE block in the file",
        tmp_path / "absent.pem": "file does not exist",
        tmp_path: "not a regular file",
        huge: f"larger than {defaults.TLS_CERTIFICATE_MAX_BYTES} bytes: not read",
    }
    for path, error in cases.items():
        entry = read_certificate(str(path))
        assert entry["error"] == error
        assert entry["not_after"] is None and entry["subject"] is None
    entry = read_certificate(str(broken))
    assert entry["error"].startswith("the first certificate cannot be parsed")
    key_only_entry = json.dumps(read_certificate(str(key_only)))
    assert all(f not in key_only_entry for f in key_fragments(made.key_pem))


def test_variables_and_inline_data_are_listed_with_an_error(tmp_path: Path) -> None:
    made = make_certificate("inline.test", [])
    inline = made.cert_pem.decode().replace("\n", "\\n")
    config = f"""
    events {{}}
    http {{
        server {{ listen 443 ssl; ssl_certificate /etc/ssl/$ssl_server_name.pem; }}
        server {{ listen 444 ssl; ssl_certificate "data:{inline}"; }}
    }}
    """
    collector = TlsCertificateCollector()
    collector.use_config(parse_text(config))
    entries = collector.collect()
    assert [(e["error"], e["not_after"]) for e in entries] == [
        ("the path holds variables (a file per handshake)", None),
        ("the certificate is inline in the config (data:)", None),
    ]
    assert entries[0]["path"] == "/etc/ssl/$ssl_server_name.pem"
    # Named by its start only: the whole PEM text is no path.
    assert entries[1]["path"].startswith("data:-----BEGIN CERTIFICATE-----")
    assert len(entries[1]["path"]) <= 40


def test_at_most_500_certificates_are_read() -> None:
    servers = "".join(
        f"server {{ listen {1000 + i} ssl; ssl_certificate /nonexistent/c{i}.pem; }}\n"
        for i in range(defaults.TLS_CERTIFICATES_MAX + 100)
    )
    collector = TlsCertificateCollector()
    collector.use_config(parse_text(f"events {{}}\nhttp {{\n{servers}}}\n"))
    entries = collector.collect()
    assert len(entries) == defaults.TLS_CERTIFICATES_MAX
    assert entries[-1]["path"] == f"/nonexistent/c{defaults.TLS_CERTIFICATES_MAX - 1}.pem"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_read_again_hourly_so_that_a_renewal_without_a_config_change_is_seen(
    tmp_path: Path,
) -> None:
    path = tmp_path / "site.pem"
    first = make_certificate("site.test", ["site.test"], days=5)
    path.write_bytes(first.cert_pem)
    clock = FakeClock()
    collector = TlsCertificateCollector(clock=clock)
    collector.use_config(parse_text(f"http {{ ssl_certificate {path}; }}"))
    assert collector.due
    assert collector.collect()[0]["not_after"] == rfc3339(first.not_after)
    renewed = make_certificate("site.test", ["site.test"], days=90)
    path.write_bytes(renewed.cert_pem)
    clock.now += defaults.TLS_CERTIFICATES_REFRESH_S - 1
    assert not collector.due
    clock.now += 1
    assert collector.due
    assert collector.collect()[0]["not_after"] == rfc3339(renewed.not_after)


TLS_SERVERS = """
    server {
        listen 127.0.0.1:{port};
        location = /nginx_status { stub_status; }
        location / { return 200 "hello\\n"; }
    }
    server {
        listen 127.0.0.1:{tls_port} ssl;
        server_name site.test;
        ssl_certificate {cert};
        ssl_certificate_key {key};
    }
    server {
        listen 127.0.0.1:{tls_port2} ssl;
        server_name combined.test;
        # Relative: nginx reads it from the config file's directory.
        ssl_certificate certs/combined.pem;
        ssl_certificate_key certs/combined.pem;
    }
"""


def tls_nginx(
    nginx_factory: Callable[..., NginxInstance], certs: Path
) -> tuple[NginxInstance, dict[str, Made], Path]:
    """A running nginx serving two certificates: one with its own key file, one combined."""
    site = make_certificate("site.test", ["site.test"], days=10)
    combined = make_certificate("combined.test", ["combined.test"], days=60)
    cert_path, key_path = write_pair(certs, "site", site)
    block = (
        TLS_SERVERS.replace("{tls_port}", str(free_port()))
        .replace("{tls_port2}", str(free_port()))
        .replace("{cert}", str(cert_path))
        .replace("{key}", str(key_path))
    )
    nginx = nginx_factory(block, start=False)
    (nginx.prefix / "conf" / "certs").mkdir()
    (nginx.prefix / "conf" / "certs" / "combined.pem").write_bytes(
        combined.cert_pem + combined.key_pem
    )
    nginx.start()
    return nginx, {"site": site, "combined": combined}, key_path


def test_real_nginx_facts_list_its_certificates_and_no_key_file_is_ever_opened(
    nginx_factory: Callable[..., NginxInstance], tmp_path: Path, opened: list[str]
) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    nginx, made, key_path = tls_nginx(nginx_factory, certs)
    opened.clear()  # the test wrote the files: from here on only the agent opens anything
    sampler = Sampler(agent_config_for(nginx, tmp_path / "state"))
    sampler.sample()
    sampler.close()
    combined_path = nginx.prefix / "conf" / "certs" / "combined.pem"
    assert sampler.facts["tls_certificates"] == [
        expected(certs / "site.pem", made["site"], "site.test", ["site.test"]),
        expected(combined_path, made["combined"], "combined.test", ["combined.test"]),
    ]
    assert str(certs / "site.pem") in opened and str(combined_path) in opened
    assert str(key_path) not in opened
    facts = json.dumps(sampler.facts)
    for pair in made.values():
        assert all(fragment not in facts for fragment in key_fragments(pair.key_pem))


def test_the_sampler_replaces_the_facts_only_when_a_certificate_changed(
    nginx_factory: Callable[..., NginxInstance], tmp_path: Path
) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    nginx, _, _ = tls_nginx(nginx_factory, certs)
    sampler = Sampler(agent_config_for(nginx, tmp_path / "state"))
    # Read on every sample instead of hourly, to see the wiring at work.
    sampler.tls_certificates = TlsCertificateCollector(refresh_s=0)
    sampler.refresh_config()
    sent = sampler.facts
    sampler.sample()
    assert sampler.facts == sent  # same content: the agent does not resend
    renewed = make_certificate("site.test", ["site.test"], days=90)
    (certs / "site.pem").write_bytes(renewed.cert_pem)
    sampler.sample()
    sampler.close()
    assert sampler.facts != sent
    assert sampler.facts["tls_certificates"][0]["not_after"] == rfc3339(renewed.not_after)
    assert sent["tls_certificates"][0]["not_after"] != rfc3339(renewed.not_after)


def test_an_agent_with_tls_certificates_off_sends_none(
    nginx_factory: Callable[..., NginxInstance], tmp_path: Path
) -> None:
    nginx = nginx_factory()
    sampler = Sampler(agent_config_for(nginx, tmp_path / "state", tls_certificates=False))
    sampler.sample()
    sampler.close()
    assert "tls_certificates" not in sampler.facts
