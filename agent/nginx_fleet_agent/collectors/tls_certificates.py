"""The TLS certificates a config serves: subject, issuer, validity and names of each leaf.

Only files named by `ssl_certificate` are opened, never one named by `ssl_certificate_key`.
A certificate file may hold the private key too (one PEM for both): its bytes are searched for
`CERTIFICATE` blocks by a pattern that cannot cross into another block, only those blocks go to
the X.509 parser, and the buffer is zeroed before the function returns.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from cryptography import x509
from nginx_fleet_analyzer.model import ParsedConfig
from nginx_fleet_analyzer.tls_files import certificate_files

from nginx_fleet_agent import defaults

log = logging.getLogger(__name__)

# Base64 and line breaks only: no "-", so a match never runs into a neighbouring key block.
_CERTIFICATE_BLOCK = re.compile(
    rb"-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----"
)
# Distinguished names are cut to this many characters: the control plane bounds what it keeps.
MAX_NAME_CHARS = 1024
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


class CertificateError(Exception):
    """The file cannot be read or holds no usable certificate; the message says why."""


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def certificate_blocks(
    path: str, max_bytes: int = defaults.TLS_CERTIFICATE_MAX_BYTES
) -> list[bytes]:
    """The PEM `CERTIFICATE` blocks of the file at `path`, in file order."""
    try:
        # O_NONBLOCK: a FIFO put at the path must not block the agent in open().
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise CertificateError("file does not exist") from None
    except OSError as exc:
        raise CertificateError(f"cannot open: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CertificateError("not a regular file")
        if info.st_size > max_bytes:
            raise CertificateError(f"larger than {max_bytes} bytes: not read")
        return _blocks_of(fd, info.st_size)
    except OSError as exc:
        raise CertificateError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _blocks_of(fd: int, size: int) -> list[bytes]:
    """The CERTIFICATE blocks of an open file of `size` bytes; nothing else is kept."""
    # One byte more than the size: a file that grew since fstat() is told from a whole one.
    buffer = bytearray(size + 1)
    view = memoryview(buffer)
    try:
        length = 0
        while length < len(buffer):
            read = os.readv(fd, [view[length:]])
            if not read:
                break
            length += read
        if length > size:
            raise CertificateError("the file changed while it was read; read again later")
        return [bytes(m.group()) for m in _CERTIFICATE_BLOCK.finditer(buffer, 0, length)]
    finally:
        view.release()
        # Whatever else the file held (a private key) does not outlive this call.
        buffer[:] = bytes(len(buffer))


def describe(pem: bytes) -> dict[str, Any]:
    """Subject, issuer, validity (RFC 3339, UTC) and DNS names of one PEM certificate."""
    try:
        certificate = x509.load_pem_x509_certificate(pem)
        described: dict[str, Any] = {
            "subject": certificate.subject.rfc4514_string()[:MAX_NAME_CHARS],
            "issuer": certificate.issuer.rfc4514_string()[:MAX_NAME_CHARS],
            "not_before": _rfc3339(certificate.not_valid_before_utc),
            "not_after": _rfc3339(certificate.not_valid_after_utc),
        }
    except ValueError as exc:
        raise CertificateError(f"the first certificate cannot be parsed: {exc}") from None
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        dns_names = names.value.get_values_for_type(x509.DNSName)
    except x509.ExtensionNotFound:
        dns_names = []
    except ValueError:
        # A malformed extension costs the names, not the dates an expiry alert needs.
        log.warning("unreadable subjectAltName in a certificate of %s", described["subject"])
        dns_names = []
    # Each name cut like the subject: the control plane refuses longer ones, with the push.
    described["dns_names"] = [
        name[:MAX_NAME_CHARS] for name in dns_names[: defaults.TLS_CERTIFICATE_MAX_NAMES]
    ]
    return described


def _entry(path: str, error: str | None) -> dict[str, Any]:
    """An entry without certificate details (filled in by the caller when there are some)."""
    return {
        "path": path,
        "subject": None,
        "issuer": None,
        "not_before": None,
        "not_after": None,
        "dns_names": [],
        "error": error,
    }


def read_certificate(path: str) -> dict[str, Any]:
    """The protocol's entry for one certificate file: its leaf (first block) or an error."""
    entry = _entry(path, None)
    try:
        blocks = certificate_blocks(path)
        if not blocks:
            raise CertificateError("no PEM CERTIFICATE block in the file")
        entry.update(describe(blocks[0]))
    except CertificateError as exc:
        entry["error"] = str(exc)
    return entry


class TlsCertificateCollector:
    """`facts.tls_certificates`: re-read on each new config and when `due` (hourly)."""

    def __init__(
        self,
        *,
        refresh_s: float = defaults.TLS_CERTIFICATES_REFRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._refresh_s = refresh_s
        self._clock = clock
        self._targets: list[tuple[str, str | None]] = []
        self._read_at: float | None = None

    def use_config(self, config: ParsedConfig) -> None:
        """Find the certificate files of a new config (read by the next `collect`)."""
        found = certificate_files(config)
        limit = defaults.TLS_CERTIFICATES_MAX
        if len(found) > limit:
            log.warning("the config names %d certificates; reading the first %d", len(found), limit)
        self._targets = [(f.path, f.reason) for f in found[:limit]]
        self._read_at = None

    @property
    def due(self) -> bool:
        """Whether the certificates should be read again (never read, or an hour went by)."""
        return self._read_at is None or self._clock() - self._read_at >= self._refresh_s

    def collect(self) -> list[dict[str, Any]]:
        """Read every certificate file now."""
        self._read_at = self._clock()
        return [
            read_certificate(path) if reason is None else _entry(path, reason)
            for path, reason in self._targets
        ]
