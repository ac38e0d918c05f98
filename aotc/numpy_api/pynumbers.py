"""Python's numbers: scalar arguments, loop indices, and what operators compute from
them alone.

A kernel is called as Python calls the function: ``cfl(1.0, 0.05, 0.0)`` passes Python
floats, a ``range`` gives Python ints, and ``math`` functions return Python floats.
Operators on Python numbers give Python numbers, and Python's division raises
ZeroDivisionError where NumPy's gives inf, nan or 0 (as does zero to a negative
power), so the kernel raises it there too, with Python's message. A float power too
large for a float is inf, where Python raises OverflowError: a check of each power's
result made loops of ``x ** 2`` on Python floats 1.5-2x slower (measured), as NumPy's
answer for ``math`` functions outside their domain is kept for the same reason.
Called with NumPy scalars (``cfl(np.float64(1), ...)``), the same kernel gives NumPy's
answer, as the uncompiled function does: the wrapper tells the kernel which scalar
arguments are Python numbers (``aotc_runtime.argument_bits``), so whether a value is
one is a traced bool (:attr:`Tracer.python_number`). A value read from an array or
made by a NumPy function is not; a loop's carried values and a branch's results are
Python numbers when they are on every path into them (``bodies.carried_numbers``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..ops.index import raise_if_p
from ..tracing.tracer import Tracer, as_tracer, python_number

#: The operators whose divisor Python checks.
_DIVISIONS: dict[str, Callable[[Any, Any], Any]] = {
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
}
_PYTHON_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _both(a: Any, b: Any) -> Any:
    if a is False or b is False:
        return False
    if a is True or b is True:
        return b if a is True else a
    return np.logical_and(a, b)


def marked(value: Any, flag: Any = True) -> Any:
    """``value``, a Python number where ``flag`` holds."""
    if isinstance(value, Tracer) and value.ndim == 0 and flag is not False:
        value.python_number = flag
    return value


def _python_type(value: Any) -> type:
    if isinstance(value, Tracer):
        return _PYTHON_TYPES.get(value.dtype.kind, float)
    return type(value)


def _message(name: str, lhs: Any, rhs: Any) -> str | None:
    """Python's message for ``lhs op 0`` of these operands' types (None: no such error)."""
    try:
        _DIVISIONS[name](_python_type(lhs)(1), _python_type(rhs)(0))
    except ZeroDivisionError as err:
        return str(err)
    except TypeError:
        return None
    return None


def _check_divisor(name: str, lhs: Any, rhs: Any, flag: Any) -> None:
    if not isinstance(rhs, Tracer) and rhs != 0:
        return
    message = _message(name, lhs, rhs)
    if message is not None:
        zero = _both(np.equal(rhs, 0), flag)
        lax.bind(raise_if_p, as_tracer(zero).atom, error="ZeroDivisionError",
                 message=message)


def _check_power(base: Any, exponent: Any, flag: Any) -> None:
    """Python's ZeroDivisionError for zero to a negative power (NumPy's is inf)."""
    if any(issubclass(_python_type(v), complex) for v in (base, exponent)):
        return  # (complex powers: NumPy's answer)
    zero = _both(np.logical_and(np.equal(base, 0), np.less(exponent, 0)), flag)
    if zero is not False:
        lax.bind(raise_if_p, as_tracer(zero).atom, error="ZeroDivisionError",
                 message="0.0 cannot be raised to a negative power")


def binary(name: str, fn: Callable[[Any, Any], Any], reflected: bool
           ) -> Callable[[Any, Any], Any]:
    """Operator ``fn`` (of ``self, other``), on Python numbers as Python computes it."""
    def op(self: Any, other: Any) -> Any:
        lhs, rhs = (other, self) if reflected else (self, other)
        flag = _both(python_number(lhs), python_number(rhs))
        if flag is not False and name in _DIVISIONS:
            _check_divisor(name, lhs, rhs, flag)
        if flag is not False and name == "pow":
            _check_power(lhs, rhs, flag)
        return marked(fn(self, other), flag)
    return op


def unary(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def op(self: Any) -> Any:
        return marked(fn(self), python_number(self))
    return op
