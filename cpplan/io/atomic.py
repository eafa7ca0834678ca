"""Write files all at once: to a temporary file beside the target, then rename."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp makes files only the owner can read; outputs get the usual mode instead.
_MODE = 0o666 & ~_umask()


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` so that readers see the old file or
    the whole new one."""
    write_bytes_atomic(path, text.encode("utf-8"))


def ensure_writable(path: str | Path) -> Path:
    """``path`` if a file can be written there; otherwise :class:`PermissionError` or
    :class:`FileNotFoundError` naming it. Call it before long work whose result goes there.

    The rename of an atomic write would replace a file the user may not write (it needs only the
    folder's permission), so a file that exists must be writable itself (and not write-protected
    by its mode, even for root), and keeps its mode.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(2, f"cannot write here: no directory {str(folder)!r}", str(path))
    if path.exists():
        if path.is_dir():
            raise IsADirectoryError(21, "is a directory", str(path))
        # Write-protected means protected, for root too (as rm and editors treat it).
        if not os.access(path, os.W_OK) or not path.stat().st_mode & stat.S_IWUSR:
            raise PermissionError(13, "permission denied (the file is read-only)", str(path))
    elif not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(13, f"permission denied (cannot create files in {str(folder)!r})",
                              str(path))
    return path


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path`` (whose
    mode an existing file keeps; see :func:`ensure_writable`)."""
    path = ensure_writable(path)
    mode = (path.stat().st_mode & 0o7777) if path.exists() else _MODE
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
