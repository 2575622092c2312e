"""The mysql client's ``DELIMITER //`` lines: not SQL, but how MySQL procedures are written in
scripts (the body's semicolons must not end the ``CREATE PROCEDURE``). The lines are blanked and the
chosen delimiter, outside strings, quoted names and comments, becomes ``;``; every other character
keeps its line and column."""

from __future__ import annotations

import re

_LINE = re.compile(r"(?im)^[ \t]*DELIMITER[ \t]+(\S+)[ \t]*$")


def client_delimiters(sql: str) -> str:
    """``sql`` with its ``DELIMITER x`` lines blanked and each ``x`` they set turned into ``;``."""
    if not _LINE.search(sql):
        return sql
    out: list[str] = []
    pos, delimiter = 0, ";"
    for m in _LINE.finditer(sql):
        out.append(_replace(sql[pos : m.start()], delimiter))
        out.append(" " * (m.end() - m.start()))
        delimiter, pos = m.group(1), m.end()
    out.append(_replace(sql[pos:], delimiter))
    return "".join(out)


def _replace(text: str, delimiter: str) -> str:
    if delimiter == ";":
        return text
    chars = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":  # a string or quoted name, doubled or backslash-escaped quotes inside
            j = i + 1
            while j < n:
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            i = j + 1
        elif text.startswith("--", i) or c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif text.startswith(delimiter, i):
            chars[i : i + len(delimiter)] = [";"] + [" "] * (len(delimiter) - 1)
            i += len(delimiter)
        else:
            i += 1
    return "".join(chars)
