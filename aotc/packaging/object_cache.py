"""The one on-disk cache of compiled objects: the build and ``aotc.jit`` share it.

An object's key is everything that decides its bytes. ``aotc.jit``'s (:func:`key`) is
the LLVM IR text, the target, LLVM's version and aotc's own compile step (the source of
the module that runs LLVM); :func:`compiled` answers from the cache or compiles and
stores. The build keys a kernel's object by its optimized program instead
(:func:`aotc.packaging.objects.program_key`, so an unchanged kernel is not even
lowered), and a wrapper's by its sources and toolchain (:mod:`.wrapper_cache`).

A build also keeps its objects in its own folder, each stamped (:func:`place`) with its
key and its bytes' digest in ``.key`` beside it: :func:`placed` trusts such a copy only
while both still match.

An object is stored as ``KEY.o`` beside ``KEY.sha256``, the SHA-256 of its bytes, each
written to a temporary file and renamed into place (a reader sees all of a file or
none of it), the object first. A load trusts an object only when its bytes hash to the
digest beside it: a truncated, empty or overwritten file (a full disk, a killed process,
a stray write) is deleted and compiled again, where it used to break every later process
in LLVM's object loader. The cache is bounded: after a store, the least recently used
objects (by modification time, which a load refreshes) go until the total is under
``AOTC_CACHE_MAX_MB`` (default 1024). ``python -m aotc cache info|clear`` shows and
empties it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_MAX_MB = 1024
OBJECT, DIGEST = ".o", ".sha256"


def cache_dir() -> Path:
    """``AOTC_CACHE_DIR``, else ``$XDG_CACHE_HOME/aotc`` or ``~/.cache/aotc``."""
    given = os.environ.get("AOTC_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "aotc"


def max_bytes() -> int:
    """The cache's bound, from ``AOTC_CACHE_MAX_MB`` (a bad value is an error, not 0)."""
    text = os.environ.get("AOTC_CACHE_MAX_MB", "").strip()
    if not text:
        return DEFAULT_MAX_MB << 20
    try:
        megabytes = float(text)
    except ValueError:
        raise ValueError(f"AOTC_CACHE_MAX_MB={text!r}: expected a number of megabytes") \
            from None
    return max(int(megabytes * (1 << 20)), 0)


def key(text: str, spec: Any) -> str:
    """The cache key of LLVM IR ``text`` compiled for target ``spec``."""
    import llvmlite.binding as llvm

    seed = f"{spec!r}\n{llvm.llvm_version_info}\n{_compile_step()}\n".encode()
    return hashlib.sha256(seed + text.encode()).hexdigest()


@functools.cache
def _compile_step() -> str:
    """The digest of the code that turns IR text into an object (its LLVM passes)."""
    from ..codegen.core import module

    return _digest(Path(module.__file__ or "").read_bytes())


def compiled(text: str, spec: Any) -> bytes:
    """The object of LLVM IR ``text`` for ``spec``: from the cache, else compiled now
    and stored."""
    from ..codegen.core.module import object_from_text

    name = key(text, spec)
    data = load(name)
    if data is None:
        data = object_from_text(text, spec)
        store(name, data)
    return data


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stamp(obj: Path) -> Path:
    return obj.with_suffix(".key")


def _stamped(key: str, data: bytes) -> str:
    return f"{key}\n{_digest(data)}"


def placed(obj: Path, key: str) -> bool:
    """Whether the build folder's ``obj`` was placed under ``key`` and is unchanged since
    (an object cut short or overwritten is made again)."""
    try:
        return _stamp(obj).read_text() == _stamped(key, obj.read_bytes())
    except (OSError, UnicodeDecodeError):
        return False


def stamp(obj: Path, key: str, data: bytes) -> None:
    """Stamp ``obj``, which holds ``data``, as placed under ``key``."""
    _stamp(obj).write_text(_stamped(key, data))


def place(obj: Path, key: str, data: bytes) -> None:
    """Write ``data`` at ``obj`` and stamp it with ``key``."""
    obj.write_bytes(data)
    stamp(obj, key, data)


def unplace(obj: Path) -> None:
    """Forget the stamp of ``obj`` (it is being made again)."""
    _stamp(obj).unlink(missing_ok=True)


def was_placed(obj: Path) -> bool:
    """Whether ``obj`` was ever placed (whether or not it is current)."""
    return _stamp(obj).is_file()


def _write_atomically(path: Path, data: bytes) -> None:
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_bytes(data)
    partial.replace(path)


def load(key: str) -> bytes | None:
    """The object stored under ``key``, or None (missing or damaged: then deleted)."""
    root = cache_dir()
    path, stamp = root / f"{key}{OBJECT}", root / f"{key}{DIGEST}"
    try:
        data, digest = path.read_bytes(), stamp.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if _digest(data) != digest:
        for damaged in (path, stamp):
            damaged.unlink(missing_ok=True)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: pruned last
    return data


def store(key: str, data: bytes, *, bound: bool = True) -> None:
    """Keep ``data`` under ``key``, then prune to the bound unless ``bound`` is false (a
    build storing many objects prunes once, after them: :func:`keep_bound`). A read-only
    or full disk only means compiling again next time."""
    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        _write_atomically(root / f"{key}{OBJECT}", data)
        _write_atomically(root / f"{key}{DIGEST}", _digest(data).encode())
        if bound:
            prune(max_bytes(), root)
    except OSError:
        pass


def keep_bound() -> None:
    """Prune the cache to ``AOTC_CACHE_MAX_MB``."""
    with contextlib.suppress(OSError):
        prune(max_bytes(), cache_dir())


@dataclass(frozen=True)
class CacheInfo:
    directory: Path
    objects: int
    total_bytes: int
    limit_bytes: int

    def __str__(self) -> str:
        return (f"{self.directory}: {self.objects} objects, "
                f"{self.total_bytes / (1 << 20):.1f} MB of {self.limit_bytes >> 20} MB")


def _objects(root: Path) -> list[tuple[float, int, Path]]:
    """(last use, size, path) of each stored object, oldest first."""
    found = []
    for path in root.glob(f"*{OBJECT}"):
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((stat.st_mtime, stat.st_size, path))
    return sorted(found)


def prune(limit: int, root: Path) -> int:
    """Delete the least recently used objects in ``root`` until at most ``limit`` bytes
    remain; returns how many went."""
    objects = _objects(root)
    total = sum(size for _, size, _ in objects)
    removed = 0
    for _, size, path in objects:
        if total <= limit:
            break
        path.unlink(missing_ok=True)
        path.with_suffix(DIGEST).unlink(missing_ok=True)
        total -= size
        removed += 1
    return removed


def info() -> CacheInfo:
    root = cache_dir()
    objects = _objects(root) if root.is_dir() else []
    return CacheInfo(root, len(objects), sum(size for _, size, _ in objects), max_bytes())


def clear() -> int:
    """Empty the cache (objects, digests, temporaries left by killed writers)."""
    root = cache_dir()
    removed = 0
    if root.is_dir():
        for path in root.iterdir():
            if path.suffix in (OBJECT, DIGEST, ".tmp") and path.is_file():
                path.unlink(missing_ok=True)
                removed += path.suffix == OBJECT
    return removed
