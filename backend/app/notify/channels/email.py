"""Email channel: a plain-text message over SMTP (STARTTLS, implicit TLS or none)."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from app.notify.channels.base import SendResult, describe_exception, redact
from app.notify.channels.text import plain_body, title
from app.notify.kinds import EmailSettings
from app.notify.notification import Notification

# A header longer than this is folded by the email package anyway; subjects stay readable.
MAX_SUBJECT_CHARS = 200


def build_message(notification: Notification, *, settings: EmailSettings) -> EmailMessage:
    """The message: subject "[FIRING:N] rule", plain-text body naming hosts, causes and links."""
    message = EmailMessage()
    message["Subject"] = title(notification)[:MAX_SUBJECT_CHARS]
    message["From"] = settings.from_addr
    message["To"] = ", ".join(settings.to_addrs)
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(domain=settings.from_addr.rsplit("@", 1)[-1])
    # Keeps auto-responders (out of office) from answering alert mail.
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(plain_body(notification))
    return message


def _connect(settings: EmailSettings, timeout_s: float) -> smtplib.SMTP:
    """An SMTP connection in the configured security mode, after EHLO (and STARTTLS)."""
    # The system's trust store; SSL_CERT_FILE points it at a private CA where one is used.
    context = ssl.create_default_context()
    port = settings.effective_port
    if settings.security == "tls":
        return smtplib.SMTP_SSL(settings.host, port, timeout=timeout_s, context=context)
    smtp = smtplib.SMTP(settings.host, port, timeout=timeout_s)
    try:
        smtp.ehlo()
        if settings.security == "starttls":
            smtp.starttls(context=context)
            smtp.ehlo()
    except BaseException:
        smtp.close()
        raise
    return smtp


def _failure(error: Exception, secrets: list[str], timeout_s: float) -> SendResult:
    """The SendResult of an SMTP failure: 5xx replies and refused TLS or AUTH are permanent."""
    text = describe_exception(error, secrets, timeout_s=timeout_s)
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _reply in error.recipients.values()]
        permanent = bool(codes) and all(code >= 500 for code in codes)
        return SendResult(
            ok=False, status_code=max(codes, default=None), error=text, permanent=permanent
        )
    if isinstance(error, smtplib.SMTPResponseException):
        code = error.smtp_code
        return SendResult(ok=False, status_code=code, error=text, permanent=code >= 500)
    if isinstance(error, smtplib.SMTPNotSupportedError | ssl.SSLCertVerificationError):
        return SendResult(ok=False, error=text, permanent=True)
    return SendResult(ok=False, error=text)


def send(
    notification: Notification,
    *,
    channel_name: str,
    settings: EmailSettings,
    secrets: dict[str, str],
    timeout_s: float,
) -> SendResult:
    """Send the message to every recipient; logs in first when a username is set."""
    password = secrets.get("password", "")
    hidden = [password] if password else []
    message = build_message(notification, settings=settings)
    try:
        with _connect(settings, timeout_s) as smtp:
            if settings.username:
                smtp.login(settings.username, password)
            refused = smtp.send_message(message)
    except (smtplib.SMTPException, OSError) as error:
        return _failure(error, hidden, timeout_s)
    if refused:
        # Delivered to the others; a retry would send them the message twice.
        names = ", ".join(sorted(refused))
        return SendResult(ok=True, error=redact(f"some recipients were refused: {names}", hidden))
    return SendResult(ok=True, status_code=250)
