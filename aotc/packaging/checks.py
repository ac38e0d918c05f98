"""The uncompiled kernel checks its arguments as the compiled one does.

Until a module is built, ``@aotc.export`` functions run on NumPy. Without these checks a
call the extension refuses (``ar1_filter(np.arange(3), 0.5)`` given int64 for ``f64[:]``)
would run and return a different answer, and tests written against the source would not
catch the mistake. :func:`checked` wraps the function so it applies the wrapper's rules
(``templates/module.pyx.in``): the first overload whose dtypes, ranks and fixed dims
match is taken, lists and tuples count as the array NumPy makes of them, scalars match by
kind (bool < int < float < complex), ndarray subclasses are refused, and named dims must
agree. Failures raise the compiled module's exceptions, with the messages its runtime
(``templates/runtime.py``, the one place they are written) builds.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..types import SHORT_NAMES, ArrayType, Signature
from .slow_paths import runtime
from .wrapper_model import shown, signature_line

_KIND = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _exact_array(o: Any) -> bool:
    return type(o) is np.ndarray or type(o) is np.memmap


def _scalar_kind(o: Any) -> int:
    if isinstance(o, bool):
        return 0
    if isinstance(o, float):
        return 2
    if isinstance(o, int):
        return 1
    if isinstance(o, complex):
        return 3
    if isinstance(o, np.generic) or (_exact_array(o) and o.ndim == 0):
        return _KIND.get(o.dtype.kind, -1)
    return -1


def _as_array(o: Any, candidates: Sequence[ArrayType]) -> Any:
    """A list, tuple or range as the array NumPy makes of it, in the first candidate's
    dtype it fits by 'same_kind' casting (as the wrapper's ``_sequence_arg``)."""
    if not isinstance(o, (list, tuple, range)):
        return o
    try:
        a = np.asarray(o)
    except (ValueError, TypeError):
        return o
    for p in candidates:
        if a.ndim == p.ndim and np.can_cast(a.dtype, p.dtype, "same_kind"):
            return a.astype(p.dtype, copy=False)
    return a


def _as_arrays(values: Sequence[Any], params: Sequence[ArrayType]) -> list[Any]:
    """Each value given for an array parameter as :func:`_as_array` makes it; one list
    given for two parameters of one type is one array, as it is one list in Python."""
    arrays: list[Any] = []
    for k, (v, p) in enumerate(zip(values, params, strict=False)):
        same = next((arrays[j] for j in range(k) if values[j] is v and params[j] == p
                     and isinstance(v, list)), None)
        arrays.append(v if p.is_scalar else same if same is not None else _as_array(v, [p]))
    return arrays


def _matches(o: Any, p: ArrayType) -> bool:
    if p.is_str:  # a str parameter (aotc.packaging.string_choices)
        return isinstance(o, str)
    if p.is_scalar:
        if p.defers_wide and runtime()["_is_wide_numpy_scalar"](o):  # (the wheel's test)
            return False
        kind = _scalar_kind(o)
        want = _KIND[np.dtype(p.dtype).kind]
        return kind == 0 if want == 0 else 0 <= kind <= want
    if not _exact_array(o) or o.ndim != p.ndim or o.dtype.kind not in _KIND:
        return False
    if o.dtype.newbyteorder("=") != np.dtype(p.dtype):
        return False
    return all(not isinstance(d, int) or o.shape[axis] == d for axis, d in enumerate(p.dims))


def _check_values(names: Sequence[str], values: Sequence[Any], sig: Signature) -> None:
    """Named dims that disagree (ValueError) and integers out of range (OverflowError)."""
    named: dict[str, int] = {}
    for name, value, p in zip(names, values, sig.params, strict=False):
        if p.is_scalar:
            dtype = np.dtype(p.dtype)
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                if not info.min <= int(value) <= info.max:
                    raise OverflowError(f"value {int(value)} of parameter '{name}' is out of "
                                        f"range for {SHORT_NAMES[dtype]}")
            continue
        for axis, dim in enumerate(p.dims):
            if isinstance(dim, str):
                size = value.shape[axis]
                if named.setdefault(dim, size) != size:
                    raise ValueError(f"parameter '{name}' axis {axis} has size {size} but "
                                     f"'{dim}' is {named[dim]}")


def _accepted(name: str, names: Sequence[str], sig: Signature) -> str:
    """``scale(x: f64[:], a: f64) -> f64[:]``, from the declared results (the build
    shows the traced ones)."""
    declared = [str(r) for r in sig.results or ()]
    results = shown("single" if len(declared) == 1 else "tuple", declared, "({})") \
        if declared else None
    return signature_line(name, names, sig.params, results)


class Matcher:
    """Which of a kernel's signatures a call matches, and the values it passes."""

    def __init__(self, fn: Callable[..., Any], signatures: Sequence[Signature]) -> None:
        self.name = fn.__name__
        self.spec = inspect.signature(fn)
        self.names = list(self.spec.parameters)
        self.signatures = tuple(signatures)

    def match(self, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[int, inspect.BoundArguments, list[Any], list[Any]]:
        """The first matching overload's index, the bound call, the values given and
        the values the kernel sees (lists and tuples made arrays). Raises the compiled
        module's TypeError, ValueError or OverflowError when none matches."""
        bound = self.spec.bind(*args, **kwargs)
        given = set(bound.arguments)
        bound.apply_defaults()
        values = [bound.arguments[n] for n in self.names]
        for name, value, p in zip(self.names, values, self.signatures[0].params, strict=False):
            if p.is_str and not isinstance(value, str):  # as the built module's
                raise TypeError(f"{self.name}(): parameter '{name}' takes a str, not "
                                f"{type(value).__name__}")
        for k, sig in enumerate(self.signatures):
            n = len(sig.params)
            if any(p in given for p in self.names[n:] if p not in _constants(self.spec, sig)):
                continue
            arrays = _as_arrays(values, sig.params)
            if all(_matches(v, p) for v, p in zip(arrays, sig.params, strict=False)):
                _check_values(self.names, arrays, sig)
                return k, bound, values, arrays
        names = [n for n in self.names if n in given]
        # (a twin reads as the signature it follows)
        runtime()["_no_match"](self.name, tuple(dict.fromkeys(
                                   _accepted(self.name, names, s) for s in self.signatures)),
                               tuple(names), tuple(bound.arguments[n] for n in names))
        raise AssertionError("unreachable: _no_match raises")


def checked(fn: Callable[..., Any], signatures: Sequence[Signature]) -> Callable[..., Any]:
    """``fn``, checking each call's arguments against ``signatures`` first."""
    matcher = Matcher(fn, signatures)

    @functools.wraps(fn)
    def kernel(*args: Any, **kwargs: Any) -> Any:
        if _tracing(args, kwargs):  # a kernel calling another while being traced
            return fn(*args, **kwargs)
        _, bound, values, arrays = matcher.match(args, kwargs)
        return _call(fn, bound, matcher.names, values, arrays)

    kernel.__aotc_unchecked__ = fn  # type: ignore[attr-defined]  # what the tracer runs
    return kernel


def _call(fn: Callable[..., Any], bound: inspect.BoundArguments, names: Sequence[str],
          values: Sequence[Any], arrays: Sequence[Any]) -> Any:
    """``fn`` on the arrays made of lists and tuples (as the compiled kernel sees them);
    what it writes into an array made of a list goes back into the list."""
    for n, a in zip(names, arrays, strict=False):
        bound.arguments[n] = a
    made = lists_made(values, arrays)
    result = fn(*bound.args, **bound.kwargs)
    lists_back(made)
    return result


def lists_made(values: Sequence[Any], arrays: Sequence[Any]
               ) -> list[tuple[list[Any], np.ndarray, np.ndarray]]:
    """Each list given and the array made of it, with a copy of that array as it was."""
    return [(v, a, a.copy()) for v, a in zip(values, arrays, strict=False)
            if a is not v and isinstance(v, list)]


def lists_back(made: Sequence[tuple[list[Any], np.ndarray, np.ndarray]]) -> None:
    """What a call wrote into an array made of a list (:func:`lists_made`) goes back into
    the list, as Python's writes into the list would have left it."""
    for given, array, before in made:
        if not np.array_equal(array, before, equal_nan=True):
            _fill_list(given, array)


def _fill_list(target: list[Any], items: Any) -> None:
    for i in range(len(target)):
        if isinstance(target[i], list):
            _fill_list(target[i], items[i])
        else:
            target[i] = items[i].item()


def _constants(spec: inspect.Signature, sig: Signature) -> set[str]:
    """Parameters past the signature's that are build-time constants (a default and no
    annotation): the caller may give them."""
    extra = list(spec.parameters.values())[len(sig.params):]
    return {p.name for p in extra if p.default is not inspect.Parameter.empty
            and p.annotation is inspect.Parameter.empty}


def _tracing(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    from ..tracing.tracer import Tracer

    def traced(a: Any) -> bool:
        return isinstance(a, Tracer) or (isinstance(a, (list, tuple)) and any(map(traced, a)))

    return any(map(traced, (*args, *kwargs.values())))
