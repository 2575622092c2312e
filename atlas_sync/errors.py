"""Errors shared by every layer.

Every error a user can cause derives from :class:`AtlasSyncError`; the CLI prints it as one line
(plus its hint) and exits non-zero, never with a traceback.
"""

from __future__ import annotations


class AtlasSyncError(Exception):
    """Base class of every error atlas-sync reports to a user.

    ``hint`` says what to do about it; it is printed on its own line by the CLI.
    """

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class InputError(AtlasSyncError):
    """Bad input: a file, statement or event that cannot be read. Names where the problem is."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        statement: int | None = None,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.statement = statement
        self.path = path  # JSON path, e.g. "$[3].class"
        super().__init__(message, hint=hint)

    @property
    def location(self) -> str:
        parts: list[str] = []
        if self.file:
            parts.append(self.file)
        if self.statement is not None:
            parts.append(f"statement {self.statement}")
        if self.line is not None:
            parts.append(f"line {self.line}" + (f", column {self.column}" if self.column is not None else ""))
        if self.path:
            parts.append(self.path)
        return ": ".join(parts)

    def __str__(self) -> str:
        loc = self.location
        return f"{loc}: {self.message}" if loc else self.message


class ConfigError(AtlasSyncError):
    """Invalid settings (config file, env var or flag)."""
