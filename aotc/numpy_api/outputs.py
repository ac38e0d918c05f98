"""``out=`` (and a ufunc's ``where=``): a NumPy function that writes its result into an
array the kernel gives, and returns that array.

NumPy computes the result as if its inputs were copied first, then casts it into
``out`` by the ``same_kind`` rule (a reduction computes in ``out``'s dtype:
:func:`in_out_dtype`); ``np.add(y[:-1], y[1:], out=y[1:])`` reads the old ``y``. Values in the IR
never change, so the result is computed as without ``out`` and written with the
assignment's broadcasting (a ufunc stretches its inputs to ``out``'s shape, never
``out`` to theirs). ``where=`` keeps ``out``'s elements where it is False.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from ..tracing.tracer import Tracer, as_tracer, current
from .functions_base import check_cast
from .functions_base import where as select
from .writes import OPERATED, write


def in_out_dtype(impl: Callable[..., Any], out: Any, kwargs: dict[str, Any]
                 ) -> dict[str, Any]:
    """``kwargs`` for a function that computes in its output's dtype when given ``out=``
    (``np.sum(x, out=o)`` adds in ``o.dtype``, as ``np.cumsum``, ``np.mean``...): those
    that take ``dtype=``, when the caller did not give one."""
    if isinstance(out, Tracer) and kwargs.get("dtype") is None and _takes_dtype(impl):
        return {**kwargs, "dtype": out.dtype}
    return kwargs


@functools.cache
def _takes_dtype(impl: Callable[..., Any]) -> bool:
    try:
        return "dtype" in inspect.signature(impl).parameters
    except (TypeError, ValueError):
        return False


def written_out(name: str, out: Any, result: Any, where: Any = True,
                casting: str = "same_kind") -> Any:
    """``result`` written into ``out`` (an array or a tuple of them and None, one per
    result), cast by the rule ``casting``. Returns ``out`` as NumPy does: the array, or
    the tuple for several results."""
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    if len(outs) != len(results):
        raise current().error(f"np.{name}: out= needs {len(results)} array(s), one per "
                              f"result, not {len(outs)}")
    for target, value in zip(outs, results, strict=True):
        if target is None:
            continue
        if not isinstance(target, Tracer):
            raise current().error(f"np.{name}: out= must be an array of the kernel, not "
                                  f"{type(target).__name__}")
        value = as_tracer(value)
        check_cast(value.dtype, target.dtype, casting, f"np.{name} output")
        if where is not True:
            value = select(where, value, target)
        write(target, Ellipsis, value, OPERATED)
    return outs[0] if len(outs) == 1 else outs


def refuse_where_without_out(name: str, where: Any, out: Any) -> None:
    """``where=`` with no ``out=`` leaves NumPy's other elements uninitialized."""
    if where is not True and (out is None or all(o is None for o in out)):
        raise current().error(f"np.{name}: where= without out= leaves the elements where "
                              "it is False uninitialized", hint="pass out= as well, or "
                              "use np.where(cond, np.ufunc(...), fill)")

