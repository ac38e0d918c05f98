"""``aotc.jit``: the build's pipeline (:mod:`aotc.pipeline`) run in this process.

``aotc.jit(f)`` compiles an ``@aotc.export`` function on its first call with llvmlite's
in-process linker (no C compiler, no Cython) and calls it through the same C ABI the
extension uses, for the instruction-set level a default wheel would run on this CPU, so
notebooks and tests run the machine code a wheel ships. Object code is cached on disk by
the hash of its LLVM IR (:mod:`aotc.packaging.object_cache`: ``AOTC_CACHE_DIR``, else
``~/.cache/aotc``; verified on load, bounded), so a new process compiles nothing it
compiled before.

"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

from ..errors import AotcError
from ..export import export
from ..pipeline import Linked, Overloads, best_target, jit_target
from ..tracing.argtypes import signature_of
from . import string_choices
from .checks import Matcher, lists_back, lists_made
from .slow_paths import runtime

__all__ = ["Choosing", "Jitted", "Specializing", "jit"]


class _Compiling:
    """What every ``aotc.jit`` object is: a kernel calling it while it is traced inlines
    ``__wrapped__``, as Numba inlines one ``@njit`` function calling another
    (:func:`aotc.autograph.runtime.call`)."""

    __aotc_jitted__ = True
    __wrapped__: Any

    @property
    def py_func(self) -> Any:
        """The Python function compiled (Numba's dispatchers' name for it)."""
        return self.__wrapped__


class Jitted(_Compiling):
    """An exported function compiled on its first call (see :func:`jit`)."""

    def __init__(self, fn: Callable[..., Any], target: str | None, fuse: bool) -> None:
        info = getattr(fn, "__aotc_export__", None)
        if info is not None:
            self._signatures = info.signatures
        elif getattr(fn, "__aotc_transform__", False):  # aotc.grad(f), aotc.vmap(f)...
            self._signatures = tuple(fn.signatures())  # type: ignore[attr-defined]
        else:
            raise TypeError(f"aotc.jit({getattr(fn, '__name__', fn)!r}): mark the function "
                            "with @aotc.export (its signatures say what to compile)")
        self.__wrapped__ = getattr(fn, "__aotc_unchecked__", fn)
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._target, self._fuse = target, fuse
        self._linked: Linked | None = None
        self._overloads = Overloads(self.__wrapped__, self._signatures)

    @functools.cached_property
    def _matcher(self) -> Matcher:
        """The signatures with their strong twins, as the build makes them
        (:mod:`aotc.packaging.weak_scalars`), traced on the first call."""
        return Matcher(self.__wrapped__, self._overloads.signatures)

    @property
    def target(self) -> str:
        """The instruction-set level the code is compiled for."""
        return self._target or best_target()

    def compile(self) -> Jitted:
        """Compile every overload now (the first call does it otherwise)."""
        if self._linked is None:
            stages = [self._overloads(s).optimize(fuse=self._fuse)
                      for s in self._matcher.signatures]
            self._linked = Linked([s.kernel for s in stages], [s.program for s in stages],
                                  jit_target(self.target))
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        k, _, values, arrays = self._matcher.match(args, kwargs)
        linked = self.compile()._linked
        assert linked is not None
        made = lists_made(values, arrays)
        result = linked.call(k, arrays[:len(self._matcher.signatures[k].params)])
        lists_back(made)
        return result


#: The signatures each ``aotc.jit`` without signatures compiled in this process, by its
#: function's source file and first line: what ``python -m aotc annotate`` writes back.
COMPILED: dict[tuple[str, int], list[str]] = {}


class Specializing(_Compiling):
    """``aotc.jit`` of a function without signatures: compiled once per distinct
    argument signature (:mod:`aotc.tracing.argtypes`), as Numba's ``@njit``; each compiled
    signature kept in memory, its object code in the disk cache."""

    def __init__(self, fn: Callable[..., Any], target: str | None, fuse: bool,
                 parallel: bool | None = None) -> None:
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._target, self._fuse, self._parallel = target, fuse, parallel
        self._compiled: dict[str, Jitted | Choosing] = {}

    @property
    def signatures(self) -> list[str]:
        """The signature strings compiled so far, in the order first called."""
        return list(self._compiled)

    def exports(self) -> str:
        """The ``@aotc.export`` line that ships what was compiled here: paste it above
        the function, list its module in ``[tool.aotc]``, and the wheel has it."""
        return f"@aotc.export({', '.join(map(repr, self.signatures))})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        text = signature_of(self.__wrapped__, args, kwargs)
        jitted = self._compiled.get(text)
        if jitted is None:
            jitted = jit(export(text, parallel=self._parallel)(_fresh_copy(self.__wrapped__)),
                         target=self._target, fuse=self._fuse)
            self._compiled[text] = jitted
            code = self.__wrapped__.__code__
            seen = COMPILED.setdefault((code.co_filename, code.co_firstlineno), [])
            seen.extend([text] if text not in seen else [])
        return jitted(*args, **kwargs)


class Choosing(_Compiling):
    """An exported function with a ``str`` parameter, compiled in this process for each
    string it is called with (:mod:`.string_choices`: the strings it selects, and a
    stand-in for any other), as the built module's function picks among its own."""

    def __init__(self, fn: Callable[..., Any], position: int, target: str | None,
                 fuse: bool) -> None:
        self.__wrapped__ = getattr(fn, "__aotc_unchecked__", fn)
        self.__name__, self.__doc__ = fn.__name__, fn.__doc__
        self._fn, self._target, self._fuse = fn, target, fuse
        self._where = string_choices.choices(fn, position)
        self._made: dict[str, Any] = {}

    def _for(self, key: str) -> Any:
        """The function compiled for string ``key``, or why it does not build."""
        if key not in self._made:
            made = Jitted(string_choices.Bound(self._fn, self._where, key), self._target,
                          self._fuse)
            try:
                self._made[key] = made.compile()
            except AotcError as err:
                self._made[key] = str(err).splitlines()[0]
        return self._made[key]

    def compile(self) -> Choosing:
        """Compile the function for every string now (each call does it otherwise)."""
        for key in (*self._where.values, string_choices.STAND_IN):
            self._for(key)
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        where = self._where
        value = args[where.position] if len(args) > where.position else kwargs.get(where.param)
        key = value if value in where.values else string_choices.STAND_IN
        chosen = self._for(key) if isinstance(value, str) else None
        return runtime()["_string_call"](self.__name__, where.param, where.position,
                                         {key: chosen, string_choices.STAND_IN: chosen},
                                         args, kwargs)


def _fresh_copy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A copy of a plain function (export marks the function it is given: each
    signature gets a copy of its own, and the user's function stays unmarked)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"aotc.jit({fn!r}): a Python function, or a kernel marked with "
                        "@aotc.export, is what it compiles")
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__, copy.__doc__ = fn.__kwdefaults__, fn.__doc__
    copy.__module__, copy.__qualname__ = fn.__module__, fn.__qualname__
    copy.__dict__.update(fn.__dict__)
    return copy


#: Numba's ``@jit`` options a kernel written for Numba passes, which aotc's compiled code
#: already has (no object mode, a disk cache, no GIL held in kernels, bounds checked) or
#: declines (``fastmath``: IEEE arithmetic, as NumPy's): accepted and ignored.
NUMBA_OPTIONS = frozenset({"nopython", "nogil", "cache", "boundscheck", "fastmath",
                           "error_model", "inline", "forceobj", "looplift", "debug"})


def jit(fn: Callable[..., Any] | str | list[str] | None = None, *,
        target: str | None = None, fuse: bool = True, **numba_options: Any) -> Any:
    """Compile a function in this process on its first call.

    An ``@aotc.export`` function (or a transform of one: ``aotc.jit(aotc.grad(f))``) is
    compiled for its signatures; any other function for
    the types of each call (a new compile per new signature, as Numba's ``@njit``; see
    ``.signatures`` and ``.exports()``). ``target`` defaults to what a default wheel runs
    on this CPU (``AOTC_CPU`` forces one). Usable as ``aotc.jit(f)`` or ``@aotc.jit``,
    and with Numba's signature strings first: ``@aotc.jit("f8(f8[:])")`` (or a list of
    them) compiles for those, as ``@aotc.export`` would. Numba's options
    (:data:`NUMBA_OPTIONS`, ``@aotc.jit(nopython=True, cache=True)``) are accepted, and
    ``parallel=True`` is recorded as ``export(parallel=True)`` records it (a build runs
    such a kernel on its thread pool; compiled in this process it runs on one thread).
    """
    parallel = numba_options.pop("parallel", None)
    unknown = sorted(set(numba_options) - NUMBA_OPTIONS)
    if unknown:
        raise TypeError(f"aotc.jit() got an unexpected keyword argument '{unknown[0]}'")
    if isinstance(fn, (str, list)):  # Numba's @jit("f8(f8[:])"): the signatures given
        strings = [fn] if isinstance(fn, str) else fn
        return lambda f: jit(export(*strings, parallel=parallel)(_fresh_copy(f)),
                             target=target, fuse=fuse)

    def make(f: Callable[..., Any]) -> Jitted | Specializing | Choosing:
        info = getattr(f, "__aotc_export__", None)
        if info is None and not getattr(f, "__aotc_transform__", False):
            return Specializing(f, target, fuse, parallel)
        position = string_choices.string_position(info.signatures) if info else None
        if position is not None:
            return Choosing(f, position, target, fuse)
        return Jitted(f, target, fuse)
    return make if fn is None else make(fn)


