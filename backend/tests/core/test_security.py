"""Password hashing and tokens."""

from __future__ import annotations

from app.core.security import hash_password, hash_token, new_token, tokens_equal, verify_password


def test_password_round_trip() -> None:
    hashed = hash_password("a password of some length")
    assert hashed.startswith("$argon2id$")
    assert verify_password("a password of some length", hashed)
    assert not verify_password("another password", hashed)


def test_verify_tolerates_missing_or_garbage_hashes() -> None:
    assert not verify_password("anything", None)
    assert not verify_password("anything", "not-a-hash")


def test_tokens_are_prefixed_random_and_hashed() -> None:
    first, second = new_token("nfh_"), new_token("nfh_")
    assert first.startswith("nfh_") and second.startswith("nfh_")
    assert first != second
    assert len(first) >= 4 + 43
    assert hash_token(first) == hash_token(first)
    assert len(hash_token(first)) == 64
    assert hash_token(first) != hash_token(second)


def test_tokens_equal() -> None:
    assert tokens_equal("abc", "abc")
    assert not tokens_equal("abc", "abd")
    assert not tokens_equal("abc", "")
