"""The code of a compiled ufunc's inner loops: one C loop per overload, calling its entry
point once per element of NumPy's outer loop.

NumPy calls a generalized ufunc's loop as ``loop(args, dimensions, steps, data)``:
``dimensions[0]`` elements of the outer loop, then the size of each distinct core dim
(in order of first appearance in the signature); ``steps`` holds each operand's outer
stride, then every operand's core strides in operand order. An ``aotc_array`` can point
straight into that: its shape is the operand's core sizes, its strides NumPy's core
strides, so no argument is copied. A kernel writes array results C-contiguously, so an
output whose core NumPy lays out otherwise goes through a buffer and is scattered.

This module computes the snippets that fill ``templates/ufunc_loop.pyx.in`` and
``templates/ufunc.pyx.in``; :mod:`aotc.packaging.wrapper` renders them. It also refuses, at build
time, kernels a ufunc loop cannot run (writes into arguments, data-dependent sizes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import BuildError
from ..ir import Program, returned_arguments
from ..ops.ufunc_signature import CoreSignature
from ..shapes import bound_symbols


@dataclass(frozen=True)
class LoopCode:
    """Cython statements of one overload's loop, by place in the template."""

    declare: str
    setup: str
    element: str
    dimcheck: str
    copyout: str
    cleanup: str


def check_program(name: str, core: CoreSignature, program: Program, result_kind: str) -> None:
    """Refuse, with the reason, a kernel whose program a ufunc loop cannot call."""
    def refuse(why: str, hint: str) -> BuildError:
        return BuildError(f"kernel '{name}' cannot be a ufunc: {why}", kernel=name, hint=hint)

    if result_kind not in ("single", "tuple"):
        raise refuse("its result is not one array or scalar, or a tuple of them",
                     "return the outputs the signature declares")
    if program.writebacks:
        raise refuse("it writes into its arguments (NumPy may pass it buffered copies)",
                     "return the values instead")
    if returned_arguments(program):
        raise refuse("it returns an argument itself", "return a copy (x.copy())")
    if len(program.outputs) != len(core.outputs):
        raise refuse(f"it has {len(program.outputs)} results but the signature "
                     f"{core.text or 'elementwise'} has {len(core.outputs)} outputs",
                     "make the signature's outputs match the kernel's results")
    for j, (out, dims) in enumerate(zip(program.outputs, core.outputs, strict=True)):
        if out.type.ndim != len(dims):
            raise refuse(f"result {j} has rank {out.type.ndim} but its core dims are "
                         f"({', '.join(map(str, dims))})", "make the ranks agree")
        if any(bound_symbols(d) for d in out.type.shape):
            raise refuse(f"the size of result {j} depends on the data",
                         "give the result a size the inputs determine")


def _core_offsets(core: CoreSignature) -> list[int]:
    """Where each operand's core strides start in ``steps``."""
    offsets, at = [], len(core.operands)
    for dims in core.operands:
        offsets.append(at)
        at += len(dims)
    return offsets


def _shape_fill(var: str, dims: Sequence[object], index: dict[str, int]) -> str:
    return "".join(f"    {var}[{d}] = dims[{1 + index[str(name)]}]\n"
                   for d, name in enumerate(dims))


def loop_code(name: str, core: CoreSignature, out_dtypes: Sequence[np.dtype]) -> LoopCode:
    """The statements of kernel ``name``'s loop over ``core``, whose outputs have
    ``out_dtypes``."""
    index = {name: k for k, name in enumerate(core.dim_names())}
    offsets = _core_offsets(core)
    declare, setup, element, dimcheck, copyout, cleanup = ([] for _ in range(6))
    for p, dims in enumerate(core.inputs):
        at = f"args[{p}] + i * steps[{p}]"
        if not dims:  # a scalar parameter: the kernel reads the element in place
            element.append(f"        argv[{p}] = {at}\n")
            continue
        declare.append(f"    cdef aotc_array _a{p}\n    cdef int64_t _shape{p}[{len(dims)}]\n")
        setup.append(_shape_fill(f"_shape{p}", dims, index)
                     + f"    _a{p}.shape = _shape{p}\n"
                     f"    _a{p}.strides = <const int64_t *>&steps[{offsets[p]}]\n"
                     f"    argv[{p}] = &_a{p}\n")
        element.append(f"        _a{p}.data = {at}\n")
    slot = 0
    for j, (dims, dtype) in enumerate(zip(core.outputs, out_dtypes, strict=True)):
        op = len(core.inputs) + j
        at = f"args[{op}] + i * steps[{op}]"
        if not dims:  # a scalar result: written in place
            element.append(f"        outv[{j}] = {at}\n")
            continue
        n, size = len(dims), np.dtype(dtype).itemsize
        strides = f"<const int64_t *>&steps[{offsets[op]}]"
        declare.append(f"    cdef int64_t _oshape{j}[{n}]\n    cdef char *_t{j} = NULL\n"
                       f"    cdef bint _direct{j}\n")
        setup.append(_shape_fill(f"_oshape{j}", dims, index)
                     + f"    _direct{j} = _c_contiguous(_oshape{j}, {strides}, {n}, {size})\n"
                     f"    if not _direct{j} and not _loop_buffer(&_t{j}, _oshape{j}, {n}, "
                     f"{size}):\n        count = 0\n")
        element.append(f"        outv[{j}] = ({at}) if _direct{j} else _t{j}\n")
        dimcheck.append(f"        if _dims_differ(&odims[{slot}], _oshape{j}, {n}):\n"
                        f"            with gil:\n"
                        f"                _dims_failed({name!r}, {j}, &odims[{slot}], "
                        f"_oshape{j}, {n})\n            break\n")
        copyout.append(f"        if not _direct{j}:\n"
                       f"            _scatter(_t{j}, {at}, _oshape{j}, {strides}, {n}, {size})\n")
        cleanup.append(f"    free(_t{j})\n")
        slot += n
    return LoopCode(*("".join(part).rstrip("\n") for part in
                      (declare, setup, element, dimcheck, copyout, cleanup)))


def signature_literal(core: CoreSignature) -> str:
    """The signature argument of ``PyUFunc_FromFuncAndDataAndSignature``."""
    return "NULL" if core.text is None else repr(core.text.encode())
