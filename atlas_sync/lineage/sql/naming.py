"""Stable names for statements: a statement is known by what it is, not by where it sits.

A script's statement process used to be ``<job>:<index>``: inserting one statement at the top
renamed every later one (a delete and a create each in Atlas, history lost). Now it is
``<job>:<target>:<fingerprint digest>``, so edits elsewhere in the script rename nothing.
"""

from __future__ import annotations

import hashlib
import re

_WS = re.compile(r"\s+")
_STRING = re.compile(r"'(?:[^'\\]|''|\\.)*'")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?\b", re.IGNORECASE)
_LINE_COMMENT = re.compile(r"--[^\n]*")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


def fingerprint(text: str) -> str:
    """The statement up to whitespace, letter case and literal values: runs of one query differing
    only in a date or an id have the same lineage and count as one statement."""
    t = _STRING.sub("?", text)
    t = _NUMBER.sub("?", t)
    return _WS.sub(" ", t).strip().rstrip(";").strip().lower()


def digest(text: str, size: int = 8) -> str:
    """A short hex digest of ``text``'s fingerprint (comments left out too)."""
    bare = _BLOCK_COMMENT.sub(" ", _LINE_COMMENT.sub(" ", _STRING.sub("?", text)))
    return hashlib.sha1(fingerprint(bare).encode("utf-8")).hexdigest()[:size]


def statement_process_id(prefix: str, target: str | None, text: str, taken: set[str]) -> str:
    """``<prefix>:<target>:<digest>``; a second statement with the same target and fingerprint in one
    input gets ``:2`` (then ``:3``...). ``taken`` collects the ids given so far."""
    base = f"{prefix}:{target}:{digest(text)}" if target else f"{prefix}:{digest(text)}"
    pid, n = base, 1
    while pid in taken:
        n += 1
        pid = f"{base}:{n}"
    taken.add(pid)
    return pid


def routine_process_id(prefix: str, routine: str, taken: set[str]) -> str:
    """``<prefix>:<routine>``: a procedure or function is one process named after itself, so editing
    its body renames nothing; a second definition of the same name in one input gets ``:2``."""
    base = f"{prefix}:{routine}"
    pid, n = base, 1
    while pid in taken:
        n += 1
        pid = f"{base}:{n}"
    taken.add(pid)
    return pid


__all__ = ["digest", "fingerprint", "routine_process_id", "statement_process_id"]
