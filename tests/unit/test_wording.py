"""Counts in words: one of a thing is singular, every other count plural."""

import pytest

from atlas_sync.wording import counted, plural


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("request", "requests"),
        ("process", "processes"),
        ("entity", "entities"),
        ("glossary", "glossaries"),
        ("day", "days"),
        ("box", "boxes"),
        ("match", "matches"),
    ],
)
def test_plural_follows_english_regular_rules(word: str, expected: str) -> None:
    assert plural(word) == expected


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "request") == "1 request"
    assert counted(0, "request") == "0 requests"
    assert counted(2, "process") == "2 processes"
    assert counted(1, "column edge") == "1 column edge"
    assert counted(3, "column edge") == "3 column edges"
    assert counted(2, "term or category", "terms or categories") == "2 terms or categories"
    assert counted(1, "term or category", "terms or categories") == "1 term or category"
