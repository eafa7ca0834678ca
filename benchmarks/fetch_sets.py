"""Fetch the public instance sets that the benchmarks and some tests read, from their upstream
repositories at pinned commits, each file checked against its SHA-256.

    python benchmarks/fetch_sets.py                     # into ../shared/benchmarks
    CPPLAN_BENCHMARKS=~/sets python benchmarks/fetch_sets.py

The sets are not shipped with cpplan: they are their authors' data (Apache-2.0 and MIT, the
licence files come along). Where they go: ``$CPPLAN_BENCHMARKS`` if set, else
``shared/benchmarks`` beside the repository, the folder the tests and benchmarks look in.

- ``minimalloc-challenging/``: google/minimalloc ``benchmarks/challenging/`` (11 files,
  154-454 buffers), the hard set of MiniMalloc's paper (ASPLOS 2023).
- ``idealloc/``: cappadokes/idealloc ``benchmarks/iopddl/`` (G_1, S_1, Y_1) and
  ``benchmarks/somas_tensors/`` (resnet50, pangu_2.6B), 816-62185 buffers.

Downloads about 2.5 MB over HTTPS: a few seconds on a broadband link, under a second when the
files are already there. ``--source URL`` reads from another copy of
GitHub's raw files (``URL/OWNER/REPO/COMMIT/PATH``; a ``file://`` URL works). Exits non-zero,
naming the file, when a download fails or its digest differs; files already present with the
right digest are kept.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE))

from shared_sets import SHARED  # noqa: E402

RAW = "https://raw.githubusercontent.com"
MINIMALLOC = ("google/minimalloc", "9f5cf810fec4494df473c23cffd0567989e81b69")
IDEALLOC = ("cappadokes/idealloc", "a21f84d5f2556046c198ac80c4af325b3be72e52")

# (folder, file): (repository, commit, path upstream, sha256)
FILES: dict[tuple[str, str], tuple[tuple[str, str], str, str]] = {
    ("minimalloc-challenging", "LICENSE"): (
        MINIMALLOC, "LICENSE", "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"),
    **{("minimalloc-challenging", f"{name}.1048576.csv"): (
        MINIMALLOC, f"benchmarks/challenging/{name}.1048576.csv", digest)
       for name, digest in (
           ("A", "4660c0d84de8a0bcada83e3a9faab2793bcb008f38b8eea228fe2b5b6c66af1a"),
           ("B", "83f3ce84099f199e804376a2b6104c7812db9d96a340695ebd44275bb4b2798a"),
           ("C", "88a286397f28b21d623f82a99f53d7c48be689ac3a4830e091d19622b8229f15"),
           ("D", "5f7d865fe822b0c2124e3ddb17d7dd94faf27e5f72e5938a94f87a0618eb1f80"),
           ("E", "25b153b7836474534cf19c4b6db46bf7a21892a21f49051817c4fdba24a79fc5"),
           ("F", "a1266bb5adc0793c8b7b04a006d6b073fe3557fe084458e9a13c0794038ce10b"),
           ("G", "60bc03e388349033b42ccfb070b071b4321015006fdabe96905fdc30f156da7d"),
           ("H", "3f87b5a2fc337836120e90806e21837d80273095ac4c3c08146d084850d0e9da"),
           ("I", "c3f205cb1a3daa5ed8134b04c25ae695e8f50417f7cdb155b9600467f5db333d"),
           ("J", "95ff0330ae1ae792f85d7851fb219c76f546482345ad6c3976e0576246db05ad"),
           ("K", "0ed830405f662b2c35ba4f5dc408ac8c95678513ecde6ee4cce5b892b15db4f1"))},
    ("idealloc", "LICENSE"): (
        IDEALLOC, "LICENSE", "0ea22ff983b4f1e13781fefa471133c1b6ff263920c7cda7202c0eb0a88410e5"),
    **{("idealloc", f"{name}.csv"): (IDEALLOC, f"benchmarks/{folder}/{name}.csv", digest)
       for folder, name, digest in (
           ("iopddl", "G_1", "97bb794b9367d8675e9539251a0f67c2ed44325ef8a1395c69b8d184d8aa6fd0"),
           ("iopddl", "S_1", "afc5af9b27acf4a06ffa22da1677618dd27333cedc4142cfd1e985531f7fa25e"),
           ("iopddl", "Y_1", "8231a0fd786aade809f3934010776c0429cc176d635ea6307111cdd423c598d7"),
           ("somas_tensors", "pangu_2.6B",
            "45faf9567019cf93048d5ed0697f37c3be9e49a7846039aabd1451cc7c44c1dd"),
           ("somas_tensors", "resnet50",
            "db5deec5d10de293db06ff280065ae8646ba61a6a2af7400421d9b3eb5d2e90a"))},
}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(dest: Path, source: str = RAW) -> int:
    """Write every file of :data:`FILES` under ``dest``; the number of files downloaded.
    Raises ``RuntimeError`` naming the file when one cannot be read or its digest differs."""
    fetched = 0
    for (folder, name), ((repo, commit), path, digest) in FILES.items():
        target = dest / folder / name
        if target.is_file() and _digest(target.read_bytes()) == digest:
            continue
        url = f"{source.rstrip('/')}/{repo}/{commit}/{path}"
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                data = response.read()
        except OSError as e:
            raise RuntimeError(f"{folder}/{name}: cannot read {url}: {e}") from e
        if _digest(data) != digest:
            raise RuntimeError(f"{folder}/{name}: {url} has SHA-256 {_digest(data)}, "
                               f"expected {digest}")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(target.suffix + ".part")
        partial.write_bytes(data)
        partial.replace(target)
        fetched += 1
        print(f"fetched {folder}/{name} ({len(data)} bytes)", flush=True)
    return fetched


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", type=Path, default=SHARED,
                        help=f"where the sets go (default: $CPPLAN_BENCHMARKS or {SHARED})")
    parser.add_argument("--source", default=RAW, help=f"raw-file base URL (default {RAW})")
    args = parser.parse_args()
    try:
        fetched = fetch(args.dest, args.source)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"{args.dest}: {fetched} files fetched, {len(FILES) - fetched} already there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
