"""Counts in words for what users read: ``counted(1, "request")`` is "1 request", not "1 requests"."""

from __future__ import annotations


def plural(word: str) -> str:
    """``word``'s plural by English's regular rules (entity -> entities, process -> processes)."""
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u"):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def counted(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` (singular), the plural form (``many``, or :func:`plural`'s) unless ``n`` is 1;
    in a phrase (``"column edge"``) the last word takes the plural."""
    if n == 1:
        return f"{n} {word}"
    if many is None:
        head, _, last = word.rpartition(" ")
        many = f"{head} {plural(last)}" if head else plural(last)
    return f"{n} {many}"


__all__ = ["counted", "plural"]
