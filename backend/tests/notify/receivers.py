"""Real receivers on 127.0.0.1 for channel tests: HTTP, a socket that never answers, SMTP."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Received:
    """One request as the receiver saw it."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic()

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    """A scripted answer."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"ok"


class HttpReceiver:
    """A threaded HTTP server that records POSTs and answers from a script (then 200 ok)."""

    def __init__(self, script: list[Reply] | None = None) -> None:
        self.received: list[Received] = []
        self.script = list(script or [])
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.received.append(
                        Received(self.path, dict(self.headers.items()), body, time.monotonic())
                    )
                    reply = receiver.script.pop(0) if receiver.script else Reply()
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port: int = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str = "/hook") -> str:
        """The address of path on this receiver."""
        return f"http://127.0.0.1:{self.port}{path}"

    def wait_for(self, count: int, timeout_s: float = 30) -> list[Received]:
        """The requests once there are count of them (fails after timeout_s)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.02)
        raise AssertionError(f"{len(self.received)} requests received, {count} expected")


@contextmanager
def http_receiver(script: list[Reply] | None = None) -> Iterator[HttpReceiver]:
    """An HttpReceiver running for the block."""
    receiver = HttpReceiver(script)
    receiver.thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()


@contextmanager
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) but never reads or answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield sock.getsockname()[1]


@dataclass(frozen=True)
class TlsFiles:
    """A private CA and a server certificate for 127.0.0.1 and localhost signed by it."""

    ca_cert: Path
    server_cert: Path
    server_key: Path

    def server_context(self) -> ssl.SSLContext:
        """The server side's TLS context."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.server_cert, self.server_key)
        return context


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_tls_files(directory: Path) -> TlsFiles:
    """Generate the CA and the server certificate (EC P-256, valid one day) into directory."""
    now = datetime.now(UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("nginx-fleet test CA"))
        .issuer_name(_name("nginx-fleet test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca_cert.subject)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(IPv4Address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    files.ca_cert.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    files.server_cert.write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))
    files.server_key.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


@dataclass(frozen=True)
class Mail:
    """One message the SMTP server accepted."""

    mail_from: str
    rcpt_tos: list[str]
    content: bytes
    login: str | None


class MailSink:
    """aiosmtpd handler and authenticator: keeps messages, accepts one username and password."""

    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self.password = password
        self.messages: list[Mail] = []
        self.logins: list[str] = []

    def __call__(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, auth_data: Any
    ) -> AuthResult:
        """The authenticator: success only for the expected credentials."""
        assert isinstance(auth_data, LoginPassword)
        login = auth_data.login.decode()
        ok = login == self.username and auth_data.password.decode() == self.password
        if ok:
            self.logins.append(login)
        return AuthResult(success=ok, handled=False, auth_data=login if ok else None)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        """Keep the message."""
        login = session.auth_data if isinstance(session.auth_data, str) else None
        self.messages.append(
            Mail(
                mail_from=str(envelope.mail_from),
                rcpt_tos=list(envelope.rcpt_tos),
                content=bytes(envelope.original_content or b""),
                login=login,
            )
        )
        return "250 Message accepted"


@contextmanager
def smtp_server(sink: MailSink, **smtp_options: Any) -> Iterator[int]:
    """An aiosmtpd server on 127.0.0.1 for the block; yields its port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    controller = Controller(
        sink, hostname="127.0.0.1", port=port, authenticator=sink, **smtp_options
    )
    controller.start()
    try:
        yield port
    finally:
        controller.stop()
