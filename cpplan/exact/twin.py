"""The tiling search's twin: the same search with other random choices, in a process of its
own (``python -m cpplan.exact.twin``), on the core the search leaves idle; the first answer
wins (the search is heavy-tailed: two draws halve the chance of a long run). See
:data:`cpplan.exact.tiling.HELPER_FROM` for when one is started.

The parent writes ``(problem, seed, seconds)`` pickled on the twin's stdin and polls for its
end; closing stdin (or the parent's end) stops the twin.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from .tiling_search import TilingSearch

__all__ = ["Twin", "main"]


def main() -> None:
    """A twin search's process (``python -m cpplan.exact.twin``): reads ``(problem, seed,
    seconds)`` pickled on stdin (``problem``: :class:`TilingSearch`'s arguments), searches
    with its own random choices until an answer, the time, or the end of stdin (the parent
    gone), and writes ``(status, solution)`` pickled on stdout."""
    problem, seed, seconds = pickle.load(sys.stdin.buffer)
    stdin = sys.stdin.buffer

    def stopped() -> bool:
        return bool(select.select([stdin], [], [], 0)[0])

    search = TilingSearch(*problem)
    status = search.run(seed, time.perf_counter() + seconds, None, stopped, noisy=True)
    with contextlib.suppress(BrokenPipeError, OSError):
        pickle.dump((status, search.solution if status == "feasible" else None),
                    sys.stdout.buffer)
        sys.stdout.buffer.flush()


class Twin:
    """A twin of a search in a process of its own (the module docstring). A plain
    subprocess, not :mod:`multiprocessing`: its start methods that do not fork (and forking a
    process that runs solver threads is unsafe) import the caller's main module again."""

    def __init__(self, search: TilingSearch, seed: tuple, deadline: float) -> None:
        problem = (np.asarray(search.sz, np.int64), np.asarray(search.al, np.int64),
                   np.asarray(search.st, np.int64), np.asarray(search.en, np.int64),
                   search.T, search.H, search.classes)
        seconds = max(0.0, deadline - time.perf_counter()) if deadline < float("inf") else 3600
        # The child imports this very cpplan, wherever the caller found it.
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root, *filter(None, [os.environ.get("PYTHONPATH")])]))
        self.proc = subprocess.Popen([sys.executable, "-m", "cpplan.exact.twin"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None  # (both PIPE)
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        pickle.dump((problem, seed, seconds), self.stdin)
        self.stdin.flush()
        self.answer: tuple | None = None

    def answered(self) -> bool:
        """Whether the twin has a feasible packing or a proof (polled by the search)."""
        if self.answer is None and self.proc.poll() is not None:
            try:
                self.answer = pickle.load(self.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                self.answer = ("unknown", None)
        return self.answer is not None and self.answer[0] in ("feasible", "infeasible")

    def close(self) -> tuple | None:
        """Stop the twin; its answer if it had one (``(status, solution)``)."""
        answered = self.answered()
        if self.proc.poll() is None:  # no answer to wait for: no need to end it gently
            self.proc.kill()
            self.proc.wait()
        for f in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):
                f.close()
        return self.answer if answered else None


if __name__ == "__main__":
    main()
