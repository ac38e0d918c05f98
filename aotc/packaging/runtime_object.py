"""The shared runtime's object: compiled once per toolchain, linked into every module.

Most of a module's wrapper is the same for every module: the call path, the thread
pool, scratch and random states, the slow paths (``templates/runtime.pyx.in``). Compiled
into each module, it was most of a clean build (Cython, then gcc over a megabyte of C).
It is now a Cython module of its own, ``_aotc_runtime``, whose object is cached under the
toolchain's key (:mod:`.wrapper_cache`) and linked into each extension beside the
module's own small wrapper, which runs its init (``aotc_rt_load`` in
``templates/module.pyx.in``). Its symbols are hidden, and its init is renamed
(``aotc_rt_init``), so two aotc extensions in one process never see each other's.

When the cache lacks it, the build's wrapper worker (:class:`.wrapper_cache.Worker`)
makes it while the kernels are traced, and the link takes the object.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from . import wrapper, wrapper_cache

#: The runtime's module name, as Cython compiles it (its init is renamed at compile time).
NAME = "_aotc_runtime"
#: Flags the runtime compiles with beyond a wrapper's: its init under a private name,
#: and nothing exported but the threadpoolctl functions it marks itself.
FLAGS = (f"-DPyInit_{NAME}=aotc_rt_init", "-DCYTHON_NO_PYINIT_EXPORT", "-fvisibility=hidden")


def write_sources(directory: Path) -> list[Path]:
    """The runtime's ``.pyx`` and the files it reads, written into ``directory`` (only
    when changed); returns their paths, the ``.pyx``'s first."""
    directory.mkdir(parents=True, exist_ok=True)
    files = {f"{NAME}.pyx": wrapper.render_runtime().encode(), **wrapper.declarations()}
    for name, text in files.items():
        path = directory / name
        if not path.is_file() or path.read_bytes() != text:
            path.write_bytes(text)
    return [directory / name for name in files]


def start(directory: Path, obj: Path, compile_command: Sequence[str], flags: Sequence[str],
          key_flags: Sequence[str], worker: Callable[[], wrapper_cache.Worker], *,
          force: bool = False) -> wrapper_cache.Job:
    """Start making the runtime's object at ``obj`` (from sources written into
    ``directory``), unless it is there or in the cache (:func:`.wrapper_cache.start`)."""
    sources = write_sources(directory)
    return wrapper_cache.start(NAME, sources[0], obj, [*compile_command, f"-I{directory}"],
                               [*flags, *FLAGS], [*key_flags, *FLAGS], sources, worker,
                               force=force)
