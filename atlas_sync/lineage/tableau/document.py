"""Tableau files -> parsed XML: ``.twb`` / ``.tds`` and their zipped ``.twbx`` / ``.tdsx`` (docs/bi.md).

A file that is not well-formed XML (truncated), or a zip that is corrupt or holds no workbook / data
source, is a :class:`TableauFileError` naming the file: nothing of that file is read.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from xml.etree import ElementTree as ET

TABLEAU_EXTENSIONS = (".twb", ".twbx", ".tds", ".tdsx")


class TableauFileError(Exception):
    def __init__(self, file: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.message = message
        self.line = line


@dataclass
class TableauDoc:
    path: str  # the file given (the .twbx, not the .twb inside)
    stem: str  # the file's name without extension: the workbook's / published data source's key
    root: ET.Element  # <workbook> or <datasource>

    @property
    def is_workbook(self) -> bool:
        return self.root.tag == "workbook"


def tableau_files(paths: list[str]) -> list[str]:
    """The Tableau files of ``paths`` (folders searched, sorted)."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames.sort()
                out += [
                    os.path.join(dirpath, f)
                    for f in sorted(filenames)
                    if f.lower().endswith(TABLEAU_EXTENSIONS)
                ]
        else:
            out.append(p)
    return out


def load(path: str) -> TableauDoc:
    stem = os.path.splitext(os.path.basename(path))[0]
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise TableauFileError(path, f"cannot read: {exc.strerror}") from None
    if head.startswith(b"PK"):
        data = _inner(path)
    else:
        with open(path, "rb") as fh:
            data = fh.read()
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else None
        raise TableauFileError(path, f"not a well-formed Tableau file (truncated?): {exc}", line) from None
    if root.tag not in ("workbook", "datasource"):
        raise TableauFileError(path, f"not a Tableau workbook or data source (its root is <{root.tag}>)")
    return TableauDoc(path=path, stem=stem, root=root)


def _inner(path: str) -> bytes:
    """The .twb / .tds inside a .twbx / .tdsx (the one at the top level first)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.lower().endswith((".twb", ".tds"))]
            if not names:
                raise TableauFileError(path, "the packaged file holds no .twb or .tds")
            names.sort(key=lambda n: (n.count("/"), n))
            return zf.read(names[0])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise TableauFileError(
            path, f"not a readable packaged Tableau file (corrupt or truncated zip: {exc})"
        ) from None
