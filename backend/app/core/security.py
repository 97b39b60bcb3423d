"""Password hashing (argon2id) and opaque token helpers."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_hasher = PasswordHasher(type=Type.ID)

# Verified against when a username is unknown, so that both paths cost one argon2 run.
_DUMMY_HASH = _hasher.hash("nginx-fleet-timing-equaliser")


def hash_password(password: str) -> str:
    """Hash a password with argon2id."""
    return _hasher.hash(password)


def verify_password(password: str, password_hash: str | None) -> bool:
    """Check a password against its argon2 hash; a missing hash still costs one verification."""
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def password_needs_rehash(password_hash: str) -> bool:
    """True when the hash was made with weaker parameters than the current ones."""
    return _hasher.check_needs_rehash(password_hash)


HOST_TOKEN_PREFIX = "nfh_"  # noqa: S105 - a prefix, not a secret


def new_token(prefix: str) -> str:
    """A new random token (32 bytes of entropy) starting with prefix, e.g. "nfh_"."""
    return f"{prefix}{secrets.token_urlsafe(32)}"


def hash_token(token: str) -> str:
    """SHA-256 hex of a high-entropy token; what the database stores instead of the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def tokens_equal(a: str, b: str) -> bool:
    """Compare two secrets in constant time."""
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
