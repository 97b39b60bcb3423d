"""Channel secrets encrypted at rest with Fernet, the key derived from the settings' secret key.

Outside production, a random secret key is generated once into the data dir (mode 0600) and
shared by every process of the deployment; in production NGINX_FLEET_SECRET_KEY must be set.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from functools import lru_cache
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app.core.config import Settings, get_settings
from app.core.errors import ServiceError

SECRET_KEY_FILE = "secret-key"  # noqa: S105 - a file name, not a secret
# A new purpose gets a new info string, so its key differs even from the same secret key.
_HKDF_INFO = b"nginx-fleet/notify/channel-secrets/v1"


class SecretKeyMissingError(ServiceError):
    """Production without NGINX_FLEET_SECRET_KEY: secrets can be neither stored nor read."""

    status_code = 503


class SecretsUnreadableError(Exception):
    """Stored secrets that the current key cannot decrypt (the secret key was changed)."""


def _generated_key(data_dir: Path) -> str:
    """The key in data_dir, created first (0600) if absent; safe when processes race."""
    path = data_dir / SECRET_KEY_FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        scratch = data_dir / f".{SECRET_KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(48))
        try:
            # link() fails if another process got there first: then its key is the key.
            os.link(scratch, path)
        except FileExistsError:
            pass
        finally:
            scratch.unlink()
    return path.read_text().strip()


def secret_key(settings: Settings) -> str:
    """NGINX_FLEET_SECRET_KEY, or outside production the key generated in the data dir."""
    configured = settings.secret_key.get_secret_value() if settings.secret_key else ""
    if configured:
        return configured
    if settings.is_production:
        raise SecretKeyMissingError(
            "NGINX_FLEET_SECRET_KEY is not set: channel secrets cannot be stored or read; set it "
            "to a long random value (openssl rand -hex 32) for the api and worker and restart"
        )
    return _generated_key(settings.data_dir)


@lru_cache(maxsize=4)
def _fernet(key: str) -> Fernet:
    """The Fernet of a secret key (HKDF-SHA256 to 32 bytes)."""
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(
        key.encode("utf-8")
    )
    return Fernet(base64.urlsafe_b64encode(derived))


def encrypt_secrets(values: dict[str, str]) -> str | None:
    """The secrets as an encrypted token; None when there are none."""
    if not values:
        return None
    payload = json.dumps(values, sort_keys=True).encode("utf-8")
    return _fernet(secret_key(get_settings())).encrypt(payload).decode("ascii")


def decrypt_secrets(token: str | None) -> dict[str, str]:
    """The secrets of an encrypt_secrets token ({} for None)."""
    if not token:
        return {}
    try:
        payload = _fernet(secret_key(get_settings())).decrypt(token.encode("ascii"))
    except InvalidToken:
        raise SecretsUnreadableError(
            "stored channel secrets cannot be decrypted: NGINX_FLEET_SECRET_KEY (or the key "
            "file in the data dir) changed since they were saved; enter them again"
        ) from None
    values = json.loads(payload)
    return {str(name): str(value) for name, value in values.items()}
