"""Vectorizable float math: branch-free polynomial kernels emitted as LLVM IR.

Why polynomials in IR and not libmvec
-------------------------------------
A call to scalar libm (``exp``) stops LLVM's loop vectorizer, so a transcendental
kernel ran at libm's scalar speed. Two ways out were weighed:

* glibc's vector math library (``_ZGVdN4v_exp``…): fast and accurate, but every object
  would need ``-lmvec`` at link time and the variant matching each target's ISA (SSE
  ``b``, AVX2 ``d``, AVX-512 ``e``), and it is an opaque call: nothing fuses across it,
  and a library we do not control decides the accuracy and the special values.
* our own kernels, as XLA and SLEEF do: range reduction, a minimax polynomial, special
  cases by ``select``, in straight-line IR marked ``alwaysinline``. The vectorizer sees
  plain arithmetic and widens it for any target (2 doubles with SSE4.2 on the portable
  ``x86-64-v2`` baseline, 8 with AVX-512 on ``native``), it fuses with the surrounding
  elementwise code, and the wheel needs nothing beyond NumPy at run time.

We take the second. Accuracy is tested against mpmath and 80-bit long double references
(``tests/codegen/test_vecmath*.py``); the module docstrings give each algorithm.

What is here
------------
``explog``: exp, expm1, log, log1p, exp2, log2, log10. ``trig``: sin, cos, tan. ``atan``:
arctan, arctan2, tanh. ``hyperbolic``: sinh, cosh, arcsinh, arccosh, cbrt. ``power``: pow. float32
uses float32 kernels except where float64 arithmetic is the simpler route to the
accuracy bound (sin/cos/tan, whose reduction then needs no extra precision, and pow).
``sqrt`` is ``llvm.sqrt`` (one instruction) in :mod:`..mathlib`; everything else there
still calls libm.

``erf`` is not here: NumPy has no ``erf`` ufunc, so no traced NumPy program can reach
one; a kernel would be dead code until the front end grows a ``scipy.special`` hook.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from llvmlite import ir

from . import atan, explog, hyperbolic, power, trig
from .core import F64, FORMATS, Body, Fmt, Math, kernel_function

Rule = Callable[..., ir.Value]


def _widened(body: Body) -> Body:
    """Run a float64 ``body`` on float32 operands and round the result once."""
    def run(m: Math, *args: ir.Value) -> ir.Value:
        wide = Math(m.b, F64)
        result = body(wide, *(m.b.fpext(a, F64.ty) for a in args))
        return m.b.fptrunc(result, m.fmt.ty)
    return run


#: primitive -> (kernel body in the operand's format, float32 body or None for the same)
KERNELS: dict[str, tuple[Body, Body | None]] = {
    **{name: (body, None) for name, body in explog.KERNELS.items()},
    **{name: (body, _widened(body)) for name, body in trig.KERNELS.items()},
    **{name: (body, None) for name, body in atan.KERNELS.items()},
    **{name: (body, None) for name, body in hyperbolic.KERNELS.items()},
    "pow": (power.pow_f64, power.pow_f32),
}


def _arity(name: str) -> int:
    return 2 if name in ("arctan2", "pow") else 1


def kernel_rule(name: str) -> Rule:
    """The scalar rule for primitive ``name``: a call to its inlined kernel function."""
    body64, body32 = KERNELS[name]
    nargs = _arity(name)

    def rule(b: ir.IRBuilder, dtype: np.dtype, *args: ir.Value) -> ir.Value:
        fmt: Fmt = FORMATS[np.dtype(dtype)]
        body = body32 if fmt is not F64 and body32 is not None else body64
        fn = kernel_function(b.module, f"aotc.vecmath.{name}.f{fmt.bits}", fmt, nargs, body)
        return b.call(fn, list(args))

    rule.__name__ = f"vecmath_{name}"
    return rule


#: primitive name -> scalar rule, for every function with a vector kernel
VECMATH_RULES: dict[str, Rule] = {name: kernel_rule(name) for name in KERNELS}
