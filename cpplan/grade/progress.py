"""The progress bar of a grading run."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from .results import InstanceReport


class Progress:
    """A progress bar on ``stream`` (stderr): redrawn in place on a terminal, one line per
    finished instance otherwise."""

    def __init__(self, stream: TextIO | None = None, width: int = 28) -> None:
        self.done, self.width = 0, width
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.perf_counter()

    def __call__(self, done: int, total: int, inst: InstanceReport) -> None:
        self.done = done
        mark = "failed" if inst.error else f"{inst.seconds:.1f}s"
        elapsed = time.perf_counter() - self.started
        if self.tty:
            full = self.width * done // max(total, 1)
            bar = "#" * full + "." * (self.width - full)
            self.stream.write(f"\r[{bar}] {done}/{total} {elapsed:5.0f}s  {inst.name} ({mark})"
                              "\x1b[K")
            if done == total:
                self.stream.write("\n")
        else:
            self.stream.write(f"grade: {done}/{total} {inst.name} ({mark}), "
                              f"{elapsed:.0f}s elapsed\n")
        self.stream.flush()
