"""Self-signed certificates made on the spot for the TLS collector's tests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Made:
    """A certificate and its key as PEM, and the dates written into it."""

    cert_pem: bytes
    key_pem: bytes
    not_before: datetime
    not_after: datetime


def make_certificate(
    common_name: str, dns_names: list[str], *, days: int = 30, organization: str = "Test Org"
) -> Made:
    """A self-signed EC certificate valid from an hour ago for `days` days."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )
    # Whole seconds: certificates carry no fractions, and the agent reports whole seconds.
    not_before = (datetime.now(UTC) - timedelta(hours=1)).replace(microsecond=0)
    not_after = not_before + timedelta(days=days)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
    )
    if dns_names:
        san = x509.SubjectAlternativeName([x509.DNSName(n) for n in dns_names])
        builder = builder.add_extension(san, critical=False)
    cert = builder.sign(key, hashes.SHA256())
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return Made(cert.public_bytes(serialization.Encoding.PEM), key_pem, not_before, not_after)


def write_pair(directory: Path, stem: str, made: Made) -> tuple[Path, Path]:
    """Write `stem`.pem (the certificate) and `stem`.key (its key, mode 0600)."""
    cert_path, key_path = directory / f"{stem}.pem", directory / f"{stem}.key"
    cert_path.write_bytes(made.cert_pem)
    key_path.write_bytes(made.key_pem)
    key_path.chmod(0o600)
    return cert_path, key_path


def key_fragments(key_pem: bytes) -> list[str]:
    """Pieces of a PEM key that must never show up anywhere: each line of its base64 body."""
    return [line for line in key_pem.decode().splitlines() if line and "-----" not in line]
