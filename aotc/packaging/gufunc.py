"""The uncompiled face of ``@aotc.export(gufunc=...)`` and ``@aotc.export(ufunc=True)``.

In the built extension such an export is a real ``np.ufunc`` (``templates/ufunc*.pyx.in``).
Until the module is built it is a :class:`Gufunc`: a callable doing on NumPy what the
ufunc machinery does around the compiled inner loops, so tests written against the source
hold for the wheel: pick the first overload every input casts to safely (NumPy's type
resolution over registered loops), move the core axes (``axes=``/``axis=``) to the end,
broadcast the loop dims, call the kernel once per loop index, write into ``out=`` or
fresh arrays, and return a NumPy scalar for a 0-d result. It pickles by reference, as
the ufunc does, so a Dask graph built against the source runs against the extension.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..ops.ufunc_signature import CoreDim, CoreSignature
from ..types import Signature

#: Python scalars are weak (NEP 50): the kinds of loop dtype each casts into.
_WEAK_KINDS = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}


def _castable(value: Any, dtype: np.dtype) -> bool:
    """Whether NumPy's type resolution takes ``value`` for a loop input of ``dtype``."""
    weak = _WEAK_KINDS.get(type(value))
    if weak is not None:
        return dtype.kind in weak
    return bool(np.can_cast(np.asarray(value).dtype, dtype, "safe"))


class Gufunc:
    """``fn`` as a generalized ufunc over NumPy (see the module docstring)."""

    __name__: str
    __qualname__: str

    def __init__(self, fn: Callable[..., Any], core: CoreSignature,
                 signatures: Sequence[Signature], out_dtypes: Sequence[Sequence[np.dtype]]
                 ) -> None:
        functools.update_wrapper(self, fn)
        self.kernel = fn
        self.core = core
        self.signature = core.text
        self.nin, self.nout = len(core.inputs), len(core.outputs)
        self.nargs = self.nin + self.nout
        self._loops = [(tuple(np.dtype(p.dtype) for p in s.params), tuple(outs))
                       for s, outs in zip(signatures, out_dtypes, strict=True)]
        self.types = ["".join(t.char for t in ins) + "->" + "".join(t.char for t in outs)
                      for ins, outs in self._loops]
        self.ntypes = len(self.types)
        # What the tracer runs: the kernel without its argument checks.
        self.__aotc_unchecked__ = getattr(fn, "__aotc_unchecked__", fn)

    def __reduce__(self) -> str:
        """Pickled by reference (module and name), as NumPy pickles a ufunc."""
        return self.__qualname__

    def __repr__(self) -> str:
        return f"<aotc gufunc {self.__name__!r} {self.signature or 'elementwise'}>"

    # -- a call --------------------------------------------------------------------
    def __call__(self, *args: Any, out: Any = None, axes: Any = None, axis: Any = None,
                 **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{self.__name__}() got unsupported keyword arguments "
                            f"{sorted(kwargs)} (the uncompiled gufunc takes out=, axes=, "
                            "axis=)")
        if len(args) > self.nin:
            if out is not None:
                raise TypeError("cannot specify 'out' as both a positional and keyword "
                                "argument")
            args, out = args[:self.nin], args[self.nin:]
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes from {self.nin} to {self.nargs} "
                            f"positional arguments but {len(args)} were given")
        outs = self._outs(out)
        ins_t, outs_t = self._resolve(args)
        arrays = [np.asarray(a).astype(t, copy=False) for a, t in zip(args, ins_t, strict=True)]
        where = self._axes(axes, axis, arrays, outs)
        moved = [np.moveaxis(a, w, range(-len(w), 0)) if w else a
                 for a, w in zip(arrays, where, strict=False)]
        loop, sizes = self._shapes(moved)
        results = [np.empty(loop + tuple(self._size(d, sizes, j, outs, where) for d in dims),
                            dtype=t)
                   for j, (dims, t) in enumerate(zip(self.core.outputs, outs_t, strict=True))]
        self._run(moved, loop, results)
        return self._deliver(results, outs, where[self.nin:])

    def _outs(self, out: Any) -> list[Any] | None:
        if out is None:
            return None
        outs = list(out) if isinstance(out, tuple) else [out]
        if len(outs) != self.nout:
            raise ValueError(f"The 'out' tuple must have exactly {self.nout} entries: one "
                             "per ufunc output")
        for o in outs:
            if o is not None and not isinstance(o, np.ndarray):
                raise TypeError("return arrays must be of ArrayType")
        return None if all(o is None for o in outs) else outs

    def _resolve(self, args: Sequence[Any]) -> tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]]:
        """The loop (overload) of exactly the inputs' dtypes, else the first every input
        casts into safely: NumPy's order."""
        given_types = [None if type(a) in _WEAK_KINDS else np.asarray(a).dtype for a in args]
        for ins, outs in self._loops:
            if all(g == t for g, t in zip(given_types, ins, strict=True)):
                return ins, outs
        for ins, outs in self._loops:
            if all(_castable(a, t) for a, t in zip(args, ins, strict=True)):
                return ins, outs
        given = ", ".join(repr(np.asarray(a).dtype) if type(a) not in _WEAK_KINDS
                          else type(a).__name__ for a in args)
        raise TypeError(f"ufunc '{self.__name__}' did not contain a loop with signature "
                        f"matching types ({given}) (loops: {', '.join(self.types)})")

    def _axes(self, axes: Any, axis: Any, arrays: Sequence[np.ndarray], outs: Any
              ) -> list[tuple[int, ...]]:
        """Each operand's core axes (normalized, inputs then outputs)."""
        ranks = [len(dims) for dims in self.core.operands]
        if axes is not None and axis is not None:
            raise TypeError("cannot specify both 'axis' and 'axes'")
        if axis is not None:
            if any(r not in (0, 1) for r in ranks) or not any(ranks[:self.nin]):
                raise TypeError(f"{self.__name__}: axis can only be used with a single "
                                "shared core dimension, not with the signature "
                                f"{self.signature}")
            axes = [(axis,) if r else () for r in ranks]
        if axes is None:
            return [tuple(range(-r, 0)) for r in ranks]
        axes = list(axes)
        if len(axes) == self.nin and all(r == 0 for r in ranks[self.nin:]):
            axes += [()] * self.nout
        if len(axes) != self.nargs:
            raise ValueError(f"{self.__name__}: axes should be a list with an entry for all "
                             f"{self.nargs} arguments")
        found = []
        for k, (a, r) in enumerate(zip(axes, ranks, strict=True)):
            entry = (a,) if isinstance(a, int) else tuple(a)
            if len(entry) != r:
                raise ValueError(f"{self.__name__}: operand {k} of axes has {len(entry)} "
                                 f"entries, but the core dimensions have {r}")
            ndim = arrays[k].ndim if k < self.nin else (
                outs[k - self.nin].ndim if outs is not None and outs[k - self.nin] is not None
                else None)
            found.append(tuple(_normal(i, ndim, self.__name__) for i in entry))
        return found

    def _shapes(self, moved: Sequence[np.ndarray]) -> tuple[tuple[int, ...], dict[str, int]]:
        """The broadcast loop shape and each core dim's size, checked as NumPy does."""
        sizes: dict[str, int] = {}
        loops = []
        for k, (a, dims) in enumerate(zip(moved, self.core.inputs, strict=True)):
            if a.ndim < len(dims):
                raise ValueError(
                    f"{self.__name__}: Input operand {k} does not have enough dimensions "
                    f"(has {a.ndim}, gufunc core with signature {self.signature} requires "
                    f"{len(dims)})")
            core = a.shape[a.ndim - len(dims):]
            for i, (d, n) in enumerate(zip(dims, core, strict=True)):
                want = d if isinstance(d, int) else sizes.setdefault(d, n)
                if want != n:
                    raise ValueError(
                        f"{self.__name__}: Input operand {k} has a mismatch in its core "
                        f"dimension {i}, with gufunc signature {self.signature} (size {n} "
                        f"is different from {want})")
            loops.append(a.shape[:a.ndim - len(dims)])
        return tuple(np.broadcast_shapes(*loops)), sizes

    def _size(self, d: CoreDim, sizes: dict[str, int], j: int, outs: Any,
              where: list[tuple[int, ...]]) -> int:
        if isinstance(d, int):
            return d
        if d in sizes:
            return sizes[d]
        given = outs[j] if outs is not None else None
        if given is None:
            raise ValueError(f"{self.__name__}: Output operand {j} has core dimension {d!r} "
                             "unspecified, and no output array was given to set it")
        axis = where[self.nin + j][self.core.outputs[j].index(d)]
        return int(given.shape[axis])

    def _run(self, moved: Sequence[np.ndarray], loop: tuple[int, ...],
             results: list[np.ndarray]) -> None:
        spread = [np.broadcast_to(a, loop + a.shape[a.ndim - len(dims):])
                  for a, dims in zip(moved, self.core.inputs, strict=True)]
        for index in np.ndindex(*loop):
            value = self.kernel(*(a[index] for a in spread))
            values = value if self.nout > 1 else (value,)
            for r, v in zip(results, values, strict=True):
                r[index] = v

    def _deliver(self, results: list[np.ndarray], outs: list[Any] | None,
                 where: Sequence[tuple[int, ...]]) -> Any:
        placed = [np.moveaxis(r, range(-len(w), 0), w) if w else r
                  for r, w in zip(results, where, strict=True)]
        if outs is None:
            values = [p[()] if p.ndim == 0 else p for p in placed]
        else:
            values = []
            for o, p in zip(outs, placed, strict=True):
                if o is None:
                    values.append(p[()] if p.ndim == 0 else p)
                    continue
                if o.shape != p.shape:
                    raise ValueError(f"{self.__name__}: output operand has shape {o.shape}, "
                                     f"but the result has shape {p.shape}")
                np.copyto(o, p, casting="same_kind")
                values.append(o)
        return values[0] if self.nout == 1 else tuple(values)


def _normal(axis: int, ndim: int | None, name: str) -> int:
    if ndim is None:
        return axis
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim
