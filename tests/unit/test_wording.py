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


def test_one_unknown_glossary_key_is_named_in_the_singular(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from atlas_sync.errors import InputError
    from atlas_sync.glossary import load_glossary_file

    f = tmp_path / "g.toml"
    f.write_text('owner = "o"\n[[glossary]]\nname = "G"\ncolour = "red"\n')
    with pytest.raises(InputError, match=r": unknown key colour$"):
        load_glossary_file(str(f))
    f.write_text('owner = "o"\n[[glossary]]\nname = "G"\ncolour = "red"\nsize = 1\n')
    with pytest.raises(InputError, match=r": unknown keys colour, size$"):
        load_glossary_file(str(f))
