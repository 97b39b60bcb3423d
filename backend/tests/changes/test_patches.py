"""Patch arithmetic: ops applied, reversed and applied back give the text byte for byte."""

from __future__ import annotations

from app.changes.patches import apply_ops, reverse_files, sha256_text

TEXT = "a\nb\nc\nd\ne\n"


def _patch(ops: list[dict[str, object]], text: str = TEXT) -> list[dict[str, object]]:
    return [{"path": "/f", "base_sha256": sha256_text(text),
             "new_sha256": sha256_text(apply_ops(text, ops)), "ops": ops}]  # fmt: skip


def test_ops_replace_insert_remove_and_append() -> None:
    ops = [
        {"start": 1, "count": 1, "old": ["a"], "new": ["A"]},
        {"start": 3, "count": 0, "old": [], "new": ["x", "y"]},
        {"start": 4, "count": 1, "old": ["d"], "new": []},
        {"start": 6, "count": 0, "old": [], "new": ["z"]},
    ]
    assert apply_ops(TEXT, ops) == "A\nb\nx\ny\nc\ne\nz\n"


def test_the_reverse_patch_restores_the_text_and_swaps_the_hashes() -> None:
    ops = [
        {"start": 2, "count": 1, "old": ["b"], "new": ["b1", "b2", "b3"]},
        {"start": 4, "count": 2, "old": ["d", "e"], "new": ["D"]},
    ]
    [patch] = _patch(ops)
    [back] = reverse_files([patch])
    assert back["base_sha256"] == patch["new_sha256"] and back["new_sha256"] == patch["base_sha256"]
    assert apply_ops(apply_ops(TEXT, ops), back["ops"]) == TEXT


def test_a_crlf_file_stays_crlf() -> None:
    text = "a\r\nb\r\nc\r\n"
    assert apply_ops(text, [{"start": 2, "count": 1, "old": ["b"], "new": ["B", "C"]}]) == (
        "a\r\nB\r\nC\r\nc\r\n"
    )
