"""The lowering core: from one program to its two C entry points.

:mod:`.entry` builds ``P_shapes`` and ``P`` (see :mod:`aotc.abi`) and holds the lowering
table (one rule per primitive, merged from the families' tables); :mod:`.module` runs
LLVM; :mod:`.context` is the state of one program's lowering, :mod:`.builder` the IR
builder every rule receives, :mod:`.values` the two kinds of runtime value, :mod:`.dims`
sizes as LLVM values, :mod:`.dtypes` NumPy dtypes as LLVM types, :mod:`.loops` counted
loops and nests, :mod:`.args` the C ABI's ``argv``, :mod:`.runtime` the caller's
``aotc_runtime``, :mod:`.outline` and :mod:`.specialize` the functions a big kernel is
split into, :mod:`.carries` how loop primitives wire their bodies, :mod:`.libc` and
:mod:`.simd` the C functions and vector instructions everything shares, :mod:`.jit` the
same object code run in-process (for ``aotc.jit`` and the tests).
"""
