"""The ported MiniMalloc cases (tests/minimalloc_cases.py) against the MiniMalloc binary.

A by-hand cross-check of the data the tests use (the tests never need the binary): every solver
case is given to ``../shared/anchors/minimalloc`` with its capacity ("fits?" is exit code 0), and
every CSV-reading case with a large capacity (a refusal is an error from its converter). Prints
one line per case and the agreement count. Validator, buffer-overlap and writing cases exercise
MiniMalloc's library, which its command line does not expose: they are not checked here.

    python benchmarks/minimalloc_suite.py

Takes about 2 s on this 2-core machine. Exits 1 when a case disagrees (or MiniMalloc's
binary fails to run on one: the line says so, and the others go on).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANCHOR = ROOT.parent / "shared" / "anchors" / "minimalloc"


def run(text: str, capacity: int) -> tuple[bool, str]:
    """(exit code 0, the error's first line) of the anchor on ``text``."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        src.write_text(text)
        done = subprocess.run([str(ANCHOR), f"--capacity={capacity}", f"--input={src}",
                               f"--output={out}"], capture_output=True, text=True, timeout=60)
    lines = [ln for ln in (done.stdout + done.stderr).splitlines()
             if ln.strip() and not ln.startswith(("Elapsed", "==="))]
    return done.returncode == 0, (lines[0] if lines else "")


def _refused(why: str) -> bool:
    """The error is its CSV reader's (not the search's "not found")."""
    return "search" not in why


def main() -> int:
    argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    if not ANCHOR.exists():
        print(f"skipped: {ANCHOR} is absent (the anchors are built for benchmark machines)")
        return 0
    sys.path.insert(0, str(ROOT))
    from tests.minimalloc_cases import READ, SOLVER

    agree = total = 0
    for case in SOLVER:
        try:
            fits, why = run(case.csv, case.capacity)
        except Exception as e:  # (past its timeout)
            total += 1
            print(f"ERROR  solver  {case.name:32} {type(e).__name__}: {e}", flush=True)
            continue
        if not fits and _refused(why):
            # Its CSV reader wants every offset cell filled: partly fixed problems (which its
            # tests build through the library) cannot be given to the command line.
            print(f"n/a    solver  {case.name:32} minimalloc refuses the CSV: {why}", flush=True)
            continue
        ok = fits == case.fits
        agree, total = agree + ok, total + 1
        print(f"{'agree' if ok else 'DIFFER':6} solver  {case.name:32} minimalloc "
              f"{'fits' if fits else 'does not fit'}; expected {'fits' if case.fits else 'no'}",
              flush=True)
    for case in READ:
        try:
            read, why = run(case.text, 1 << 40)
        except Exception as e:  # (past its timeout)
            total += 1
            print(f"ERROR  reading {case.name:32} {type(e).__name__}: {e}", flush=True)
            continue
        refused = not read and _refused(why)
        ok = refused == (case.buffers is None)
        agree, total = agree + ok, total + 1
        print(f"{'agree' if ok else 'DIFFER':6} reading {case.name:32} minimalloc "
              f"{'refuses: ' + why if refused else 'reads it'}", flush=True)
    print(f"{agree}/{total} cases agree with {ANCHOR.name} (solver verdicts and CSV reading)")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
