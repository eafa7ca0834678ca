"""Files that cannot be read are named, whatever the format (one reader serves both)."""

from __future__ import annotations

import pytest

from cpplan import FormatError
from cpplan.io import read_problem

NOT_UTF8 = {"p.csv": b"id,lower,upper,size\n\xe9,0,1,8\n", "p.json": b'{"format": "\xff"}'}


@pytest.mark.parametrize("name", sorted(NOT_UTF8))
@pytest.mark.parametrize("make,match", [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(NOT_UTF8[p.name]), "not UTF-8"),
])
def test_unreadable_files(tmp_path, name, make, match):
    path = tmp_path / name
    make(path)
    with pytest.raises(FormatError, match=match) as e:
        read_problem(path)
    assert e.value.source == str(path)
