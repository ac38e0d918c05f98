"""Object code for every target of a module: cached per kernel, compiled side by side.

A module carries machine code for several instruction-set levels (``targets``); the
wrapper picks one at import. Each entry point's object is keyed by its optimized program's
text (``str(program)``: :func:`aotc.ir.print_program`, which parses back to the same
program, and the functions it calls), its symbol, the target, LLVM's version and the
digest of aotc's own code (:func:`program_key`): an unchanged kernel is not lowered,
optimized or compiled again, the build's directory and the shared object cache
(:mod:`.object_cache`) answering first, and what must be compiled is lowered to LLVM IR
and spread over the machine's cores. The big functions kernels call (the GEMM, the
sorts: :mod:`aotc.codegen.core.library`) are declared in each kernel and compiled once
per target, each cached by its name, which decides its code. Per target, the entries'
objects and those are then joined into one relocatable object (``cc -r``), the one file
a C caller links.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import multiprocessing
import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AotcError, BuildError, InternalError
from . import object_cache

if TYPE_CHECKING:
    from ..codegen.core.library import Library

#: Adds the kernel's name and location to an error raised for entry ``prefix``.
Locate = Callable[[str, AotcError], AotcError]


@dataclass(frozen=True)
class Target:
    """One instruction-set level a module carries code for."""

    name: str  #: as configured: ``"x86-64-v3"``, ``"native"``
    spec: Any  #: its :class:`~aotc.codegen.TargetSpec`
    suffix: str  #: appended to every symbol prefix; ``""`` for the baseline

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.spec.cpu_features)

    def symbol(self, prefix: str) -> str:
        return prefix + self.suffix


def symbol_suffix(name: str) -> str:
    """``x86-64-v3`` -> ``_x86_64_v3``: a C identifier fragment naming the target."""
    return "_" + re.sub(r"\W", "_", name)


def make_targets(names: Sequence[str], specs: Sequence[Any]) -> list[Target]:
    """The first target is the baseline: its symbols keep the plain prefixes."""
    return [Target(name, spec, symbol_suffix(name) if k else "")
            for k, (name, spec) in enumerate(zip(names, specs, strict=True))]


@dataclass
class Job:
    """One entry point for one target: its program, its key and where its object goes;
    its LLVM IR text once it is lowered (only when it must be compiled)."""

    prefix: str
    symbol: str
    program: Any
    spec: Any
    obj: Path
    key: str
    text: str = ""


@functools.cache
def _aotc_digest() -> str:
    """The digest of aotc's own code, which lowers programs: any change to it compiles
    every kernel again."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(f"\n{path.relative_to(package).as_posix()}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


#: The source location an equation's line ends with (``  # /path/kernels.py:12``).
_LOC = re.compile(r"  # [^\n]*:\d+$", re.MULTILINE)


def program_key(symbol: str, program: Any, spec: Any) -> str:
    """The cache key of the object of ``program`` compiled as ``symbol`` for ``spec``.
    Without the equations' source locations, which only build errors show: a project
    moved elsewhere, or lines added above a kernel, leave its object as it was."""
    import llvmlite.binding as llvm

    seed = (f"aotc program object v1\n{symbol}\n{spec!r}\n{llvm.llvm_version_info}\n"
            f"{_aotc_digest()}\n")
    return hashlib.sha256((seed + _LOC.sub("", str(program))).encode()).hexdigest()


def library_key(symbol: str, spec: Any) -> str:
    """The cache key of library function ``symbol``'s object for ``spec``: its name
    decides its code (:mod:`aotc.codegen.core.library`), given aotc's own code."""
    import llvmlite.binding as llvm

    seed = (f"aotc library object v1\n{symbol}\n{spec!r}\n{llvm.llvm_version_info}\n"
            f"{_aotc_digest()}\n")
    return hashlib.sha256(seed.encode()).hexdigest()


def _compile(text: str, spec: Any, key: str) -> bytes:
    """The job's object, compiled and put in the shared cache under its ``key`` (the
    build looked there first, and prunes the cache once afterwards)."""
    from ..codegen.core.module import object_from_text

    data = object_from_text(text, spec)
    object_cache.store(key, data, bound=False)
    return data


def _from_shared_cache(job: Job) -> bool:
    """Whether the shared object cache had the job's object (then written in place)."""
    data = object_cache.load(job.key)
    if data is None:
        return False
    object_cache.place(job.obj, job.key, data)
    return True


def _serially(jobs: list[Job], locate: Locate) -> list[bytes]:
    objects = []
    for job in jobs:
        try:
            objects.append(_compile(job.text, job.spec, job.key))
        except AotcError as err:  # (a library function has no kernel to name)
            raise (locate(job.prefix, err) if job.program is not None else err) from None
    return objects


def _run(jobs: list[Job], locate: Locate) -> None:
    """Compile the jobs, in worker processes when there are several and several cores
    (a failure is compiled again here, to raise it with its kernel's location)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    objects: list[bytes] | None = None
    if len(jobs) > 1 and cores > 1 and "fork" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("fork")
        try:
            with concurrent.futures.ProcessPoolExecutor(min(cores, len(jobs)),
                                                        mp_context=context) as pool:
                objects = list(pool.map(_compile, [j.text for j in jobs],
                                        [j.spec for j in jobs], [j.key for j in jobs]))
        except Exception:
            objects = None
    if objects is None:
        objects = _serially(jobs, locate)
    for job, data in zip(jobs, objects, strict=True):
        object_cache.place(job.obj, job.key, data)
    if jobs:
        object_cache.keep_bound()


def compile_targets(entries: Sequence[tuple[str, Any]], targets: Sequence[Target],
                    cache: Path, locate: Locate, parallel: Mapping[str, bool] | None = None,
                    baseline_only: frozenset[str] = frozenset()
                    ) -> tuple[dict[str, list[Path]], int, int]:
    """Each target's objects (compiled or reused from ``cache``: the entries', then the
    library functions' they call), how many entries' objects were compiled, and of how
    many. Lowering errors of the entries compiled surface here, per entry, before
    anything is compiled.
    ``parallel`` overrides the targets' ``parallel`` per entry (``export(parallel=)``);
    the entries in ``baseline_only`` (broadcast and alias twins: fallbacks, not the
    loops calls run) are compiled for the first target alone, which every other
    target's table points at (:func:`aotc.packaging.call_tables.build`)."""
    cache.mkdir(parents=True, exist_ok=True)
    jobs: dict[str, list[Job]] = {}
    for k, target in enumerate(targets):
        for prefix, program in entries:
            if k and prefix in baseline_only:
                continue
            symbol = target.symbol(prefix)
            spec = target.spec
            if parallel and prefix in parallel:
                spec = dataclasses.replace(spec, parallel=parallel[prefix])
            jobs.setdefault(target.name, []).append(
                Job(prefix, symbol, program, spec, cache / f"{symbol}.o",
                    program_key(symbol, program, spec)))
    outdated = [job for group in jobs.values() for job in group
                if not object_cache.placed(job.obj, job.key)]
    todo = [job for job in outdated if not _from_shared_cache(job)]
    libraries: dict[str, Library] = {}
    for job in todo:
        _lower(job, libraries, locate)
    for group in jobs.values():
        library_jobs = _library_jobs(group, libraries, cache, locate)
        todo += [job for job in library_jobs if job.text]
        group += library_jobs
    _run(todo, locate)
    keep = {job.obj.name for group in jobs.values() for job in group}
    for stale in cache.glob("*.o"):  # kernels removed or renamed since the last build
        if stale.name not in keep:
            stale.unlink()
            object_cache.unplace(stale)
    return ({name: [job.obj for job in group] for name, group in jobs.items()},
            sum(job.program is not None for job in todo),
            sum(job.program is not None for group in jobs.values() for job in group))


def _lower(job: Job, libraries: dict[str, Library], locate: Locate) -> None:
    """The job's LLVM IR, declaring the library functions it calls (made in the library
    of its spec)."""
    from ..codegen import build_llvm_module

    try:
        job.text = str(build_llvm_module([(job.symbol, job.program)], job.spec,
                                         _library(libraries, job.spec)))
    except AotcError as err:
        raise locate(job.prefix, err) from None


def _library(libraries: dict[str, Library], spec: Any) -> Library:
    """The build's library for target ``spec`` (made on first use)."""
    from ..codegen.core.library import Library

    found = libraries.get(repr(spec))
    if found is None:
        found = libraries[repr(spec)] = Library(spec)
    return found


def _library_jobs(group: list[Job], libraries: dict[str, Library], cache: Path,
                  locate: Locate) -> list[Job]:
    """The library functions one target's kernels call, and those they call in turn, a
    job each, with its IR when its object must be compiled. What an object reused from
    an earlier build calls is read from it; a function no kernel lowered now has made
    is made by lowering one of its callers again (whose object stays)."""
    from ..codegen.core.library import needed_symbols

    callers: dict[str, Job] = {}  # library symbol -> a kernel calling it (maybe through others)
    made: dict[str, Job] = {}
    pending = list(group)
    while pending:
        caller = pending.pop()
        kernel = caller if caller.program is not None else callers[caller.symbol]
        for symbol in needed_symbols(caller.text or caller.obj.read_bytes()):
            if symbol in made:
                continue
            callers[symbol] = kernel
            job = made[symbol] = Job("", symbol, None, kernel.spec, cache / f"{symbol}.o",
                                     library_key(symbol, kernel.spec))
            pending.append(job)
            if object_cache.placed(job.obj, job.key) or _from_shared_cache(job):
                continue
            library = _library(libraries, kernel.spec)
            if library.text(symbol) is None:
                _lower(dataclasses.replace(kernel, text=""), libraries, locate)
            text = library.text(symbol)
            if text is None:
                raise InternalError(LookupError(f"no kernel calling {symbol} makes it"),
                                    phase="code generation")
            job.text = text
    return [made[symbol] for symbol in sorted(made)]


def join_objects(parts: Sequence[Path], out: Path, cc: Sequence[str]) -> None:
    """One relocatable object of ``parts`` (``cc -r``), rewritten only when they changed."""
    if out.is_file() and all(out.stat().st_mtime_ns >= p.stat().st_mtime_ns for p in parts):
        return
    done = subprocess.run([*cc, "-r", "-nostdlib", "-o", str(out), *map(str, parts)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"joining the kernels' objects into {out.name} failed: "
                         f"{' '.join(cc)} -r: {done.stderr.strip() or done.returncode}",
                         hint="aotc needs a C compiler and linker (gcc or clang) to build")
