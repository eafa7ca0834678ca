"""Read a text file whole, with errors that name the file."""

from __future__ import annotations

from pathlib import Path

from ..errors import FormatError


def read_text(path: str | Path) -> str:
    """The UTF-8 text of ``path``; :class:`FormatError` naming the file when it is missing, a
    directory, or not UTF-8."""
    path = Path(path)
    try:
        # A byte-order mark is not part of the text (editors on Windows write one).
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise FormatError("no such file", source=str(path)) from None
    except IsADirectoryError:
        raise FormatError("is a directory, not a file", source=str(path)) from None
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text ({e.reason} at byte {e.start})",
                          source=str(path)) from None
