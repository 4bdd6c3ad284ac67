"""A sealed cache file (the time index) is read without hashing its payload only
while its seal describes the very file opened; any change to the file, even one
that keeps its size and its modification time, sends the read back to the hash,
which refuses a payload that is not the one written."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from kgai_tui.core.store.cache_file import (
    cache_header,
    read_cache_file,
    seal_path,
    write_cache_file,
)

PAYLOAD = bytes(range(256)) * 64


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many payloads the read hashed (the real SHA-256, counted)."""
    calls: list[int] = []
    real = hashlib.sha256

    def counting(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(hashlib, "sha256", counting)
    return calls


def _written(tmp_path: Path) -> tuple[Path, Path]:
    root, path = tmp_path / "store", tmp_path / "cache" / "engine.time.bin"
    root.mkdir()
    write_cache_file(
        path, cache_header(root), [PAYLOAD[:100], PAYLOAD[100:]], seal=True
    )
    assert seal_path(path).is_file()
    return root, path


def test_a_sealed_file_is_read_without_hashing_it(
    tmp_path: Path, hashed: list[int]
) -> None:
    root, path = _written(tmp_path)
    hashed.clear()
    read = read_cache_file(root, path, sealed=True)
    assert read is not None and bytes(read[1]) == PAYLOAD
    assert hashed == []
    # A reader that does not ask for the seal hashes, as every cache file's does.
    read = read_cache_file(root, path)
    assert read is not None and bytes(read[1]) == PAYLOAD
    assert hashed == [1]


def test_a_byte_changed_in_place_is_refused_even_with_its_times_put_back(
    tmp_path: Path, hashed: list[int]
) -> None:
    root, path = _written(tmp_path)
    before = os.stat(path)
    data = bytearray(path.read_bytes())
    data[-7] ^= 0x01
    with open(path, "r+b") as f:  # the same inode and size
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    hashed.clear()
    assert read_cache_file(root, path, sealed=True) is None
    assert hashed == [1], "the change time broke the seal: the payload was hashed"
    assert read_cache_file(root, path, sealed=True) is None  # and never sealed
    assert hashed == [1, 1]


@pytest.mark.parametrize(
    "seal",
    ["garbage", "missing", "another file's", "a fifo", "/dev/zero", "a directory"],
)
def test_a_seal_that_does_not_describe_the_file_means_hashing_it(
    tmp_path: Path, hashed: list[int], seal: str
) -> None:
    root, path = _written(tmp_path)
    if seal == "garbage":
        seal_path(path).write_bytes(b"[1, 2")
    elif seal == "missing":
        seal_path(path).unlink()
    elif seal == "a fifo":  # opened for reading it would block: never opened
        seal_path(path).unlink()
        os.mkfifo(seal_path(path))
    elif seal == "/dev/zero":
        seal_path(path).unlink()
        seal_path(path).symlink_to("/dev/zero")
    elif seal == "a directory":  # deleted when the reader seals the file
        seal_path(path).unlink()
        seal_path(path).mkdir()
    else:  # the same bytes under a new inode: the seal is the old file's
        copy = path.with_name("copy")
        copy.write_bytes(path.read_bytes())
        os.replace(copy, path)
    hashed.clear()
    read = read_cache_file(root, path, sealed=True)
    assert read is not None and bytes(read[1]) == PAYLOAD
    assert hashed == [1]
    # Found whole, it is sealed by that read: the next one does not hash it.
    read = read_cache_file(root, path, sealed=True)
    assert read is not None and bytes(read[1]) == PAYLOAD
    assert hashed == [1]
    assert seal_path(path).is_file()


def test_a_file_renamed_over_the_sealed_one_is_hashed_and_refused(
    tmp_path: Path, hashed: list[int]
) -> None:
    """Another program's file of the same size in its place: the hash decides."""
    root, path = _written(tmp_path)
    other = path.with_name("other")
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    other.write_bytes(bytes(data))
    os.replace(other, path)
    hashed.clear()
    assert read_cache_file(root, path, sealed=True) is None
    assert read_cache_file(root, path, sealed=True) is None
    assert hashed == [1, 1]
