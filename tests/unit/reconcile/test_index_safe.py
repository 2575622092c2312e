"""Which filter values Atlas's basic search matches on its index (reconcile.actual.index_safe)."""

import pytest

from atlas_sync.reconcile.actual import index_safe


@pytest.mark.parametrize("name", ["orders", "customer_id", "raw.orders", "C0", "t_2024"])
def test_letters_digits_underscores_and_dots_stay_on_the_index(name: str) -> None:
    assert index_safe(name)


@pytest.mark.parametrize(
    "name", ["raw.orders@prod", "my-orders", "a b", "x:y", "p/q", "50%", "a=b", "", "(x)", 'q"', None, 7]
)
def test_special_characters_blanks_and_non_strings_do_not(name: object) -> None:
    assert not index_safe(name)
