"""Run compiled kernels in-process, through the same C ABI the Cython wrapper uses.

The object code is exactly what :func:`~aotc.codegen.compile_object` emits for a wheel
(PIC, explicit CPU); LLVM's ORC JIT links it into this process and resolves libm
against the running interpreter. :class:`JitKernel.__call__` then follows the wrapper's
protocol step by step: build ``aotc_array`` structs (any strides), call ``P_shapes``,
raise the failing check's exception, allocate outputs and aligned scratch, call ``P``,
map its return code. Tests compare the results with :func:`aotc.interpret.eval_program`.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import llvmlite.binding as llvm
import numpy as np

from ...abi import (
    DETAILS,
    FIRST_PROGRAM_ERROR,
    INFO_SLOTS,
    KERNEL_ERRORS,
    RANDOM_KEY_BYTES,
    RANDOM_STATE_BYTES,
    SCRATCH_ALIGN,
    SHAPE_ERRORS,
)
from ...interpret import bind_dims
from ...ir import Program, returned_arguments, runtime_errors
from ...ops import numpy_loops
from ...ops.index import KernelError
from ...packaging import slow_paths
from ...packaging.alias_twins import aliasing
from ...packaging.argument_order import order_conflicts
from ...packaging.loop_calls import numpy_loops_called
from ...packaging.slow_paths import kernel_exception
from ...shapes import bound_symbols
from ...tracing.messages import fill
from ..targets.spec import TargetSpec, jit_target_machine
from .module import compile_object

_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_KERNEL = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_void_p)
_POLL = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
_BODY = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_PARALLEL_FOR = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_void_p, ctypes.c_int64)
_RANDOM = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)


class Runtime(ctypes.Structure):
    """``typedef struct aotc_runtime { poll; int64_t detail[4]; parallel_for; random;
    uint64_t argument_bits; int64_t threads; void *heap; }``"""

    _fields_ = [("poll", _POLL), ("detail", ctypes.c_int64 * DETAILS),
                ("parallel_for", _PARALLEL_FOR), ("random", _RANDOM),
                ("argument_bits", ctypes.c_uint64), ("threads", ctypes.c_int64),
                ("heap", ctypes.c_void_p)]


class _ThreadStates(threading.local):
    """Each thread's ``aotc_random`` of each generator, shared by every kernel of the
    process (as the wrapper's are by a module's), seeded from the OS at first use."""

    def __init__(self) -> None:
        self.states: dict[int, Any] = {}


_STATES = _ThreadStates()


def _random_state(_rt: int, generator: int) -> int:
    if generator not in _STATES.states:
        state = ctypes.create_string_buffer(RANDOM_STATE_BYTES)
        ctypes.memmove(state, os.urandom(RANDOM_KEY_BYTES), RANDOM_KEY_BYTES)
        ctypes.c_int32.from_buffer(state, RANDOM_KEY_BYTES).value = RANDOM_KEY_BYTES // 4
        ctypes.c_int64.from_buffer(state, RANDOM_STATE_BYTES - 8).value = 1
        _STATES.states[generator] = state
    return ctypes.addressof(_STATES.states[generator])


_RANDOM_HOOK = _RANDOM(_random_state)


_NEVER = _POLL(lambda _rt: 0)
_PARALLEL_HOOKS: dict[int, Any] = {}


def _parallel_for(threads: int) -> Any:
    """The ``parallel_for`` hook for ``threads`` threads, made once (a ctypes callback
    takes microseconds to create: too slow to make on every call)."""
    if threads not in _PARALLEL_HOOKS:
        _PARALLEL_HOOKS[threads] = _make_parallel_for(threads)
    return _PARALLEL_HOOKS[threads]


def _make_parallel_for(threads: int) -> Any:
    """A ``parallel_for`` hook running chunks on ``threads`` Python threads (ctypes
    releases the GIL while a chunk runs, so they do run at once); chunks run in reverse
    order on one thread, which tests that no chunk depends on another."""
    def hook(_rt: int, body_addr: int, frame: int, chunks: int) -> int:
        body = _BODY(body_addr)
        if threads <= 1:
            codes = [body(frame, k, k + 1) for k in reversed(range(chunks))][::-1]
        else:
            with ThreadPoolExecutor(threads) as pool:
                codes = list(pool.map(lambda k: body(frame, k, k + 1), range(chunks)))
        return next((code for code in codes if code), 0)
    return _PARALLEL_FOR(hook)
_library_ids = itertools.count()
_sessions: dict[TargetSpec, tuple[Any, Any]] = {}


class AotcArray(ctypes.Structure):
    """``typedef struct { void *data; const int64_t *shape, *strides; } aotc_array;``"""

    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


def _session(target: TargetSpec) -> Any:
    """One LLJIT per target for the whole process (it owns its target machine).

    It links with JITLink, which places an object's sections in one block and fails on
    a fixup out of range. RuntimeDyld, llvmlite's default, maps each section on its
    own: in a long process whose address space has holes (large arrays come and go), a
    small constant section can land over 2 GiB from the code that reads it through
    32-bit PC-relative fixups, which a release build of RuntimeDyld truncates silently.
    That is our reading of a float32 solve that returned NaN twice in CI, never here."""
    if target not in _sessions:
        tm = jit_target_machine(target)
        _sessions[target] = (llvm.create_lljit_compiler(tm, use_jit_link=True), tm)
    return _sessions[target][0]


class JitLibrary:
    """Several programs compiled into one object and linked once (fast for tests)."""

    def __init__(self, programs: Sequence[Program], target: TargetSpec | None = None, *,
                 names: Sequence[str] | None = None,
                 make_object: Callable[[list[tuple[str, Program]], TargetSpec], bytes]
                 = compile_object) -> None:
        """``names`` are the entry symbols (fresh ones by default); ``make_object``
        compiles the entries (a cache may answer instead)."""
        target = target or TargetSpec.parse("native")
        lib = next(_library_ids)
        names = list(names or [f"aotc_jit{lib}_{k}" for k in range(len(programs))])
        obj = make_object(list(zip(names, programs, strict=True)), target)
        builder = llvm.JITLibraryBuilder().add_object_img(obj).add_current_process()
        builder.import_symbol(numpy_loops.TABLE_SYMBOL, _numpy_loop_table(programs))
        for name in names:
            builder.export_symbol(name).export_symbol(f"{name}_shapes")
        self._tracker = builder.link(_session(target), f"aotc_jit_library_{lib}")
        self.kernels = [JitKernel._linked(p, self._tracker[f"{n}_shapes"], self._tracker[n], self)
                        for p, n in zip(programs, names, strict=True)]


class JitKernel:
    """``JitKernel(program)(*args) -> list[np.ndarray]``, compiled for ``target``."""

    program: Program
    _shapes: Callable[[int, int, int], int]  # P_shapes(argv, out_dims, info) -> failed check
    # P(argv, outv, out_dims, scratch, rt)
    _kernel: Callable[[int, int, int, int | None, int | None], int]
    _owner: JitLibrary
    #: Called by long-running loops through the runtime's poll hook: a true answer stops
    #: the kernel (``KeyboardInterrupt``).
    poll: Callable[[], bool] | None = None
    #: Check and convert arguments as the wrapper does (``aotc.jit`` sets it; tests of
    #: the kernel's own overlap handling call it without), naming them by ``param_names``.
    checks_arguments: bool = False
    param_names: Sequence[str] | None = None
    _orders: list[tuple[int, int]] | None = None
    #: Threads of the runtime's ``parallel_for`` hook (0: no hook, kernels built with
    #: ``parallel`` run every chunk on the calling thread).
    threads: int = 2
    #: The overload's broadcast twin (aotc.packaging.broadcast_twins): run instead when
    #: the sizes fail this one's checks.
    twin: JitKernel | None = None
    #: The overload's alias twins (aotc.packaging.alias_twins), by ``(written, read,
    #: how)``: run instead when those two arguments are one array.
    alias_twins: dict[tuple[int, int, int], JitKernel] | None = None

    def __init__(self, program: Program, target: TargetSpec | None = None) -> None:
        other = JitLibrary([program], target).kernels[0]
        self.__dict__.update(other.__dict__)

    @classmethod
    def _linked(cls, program: Program, shapes_addr: int, kernel_addr: int,
                owner: JitLibrary) -> JitKernel:
        self = cls.__new__(cls)
        self.program = program
        self._shapes = _ENTRY(shapes_addr)
        self._kernel = _KERNEL(kernel_addr)
        self._owner = owner  # keeps the linked code alive
        return self

    def __call__(self, *args: Any) -> list[np.ndarray]:
        program = self.program
        if len(args) != len(program.inputs):
            raise TypeError(f"{program.name}() takes {len(program.inputs)} arguments, "
                            f"got {len(args)}")
        given = [_argument(k, var.type.dtype, var.type.ndim, a)
                 for k, (var, a) in enumerate(zip(program.inputs, args, strict=True))]
        argument_bits = sum(1 << k for k, a in enumerate(args)  # (see aotc.abi)
                            if type(a) in (int, float, bool, complex)
                            or (k < 64 and given[k].ndim and given[k].flags.c_contiguous))
        if self.checks_arguments:
            twin = self._check_arguments(given)
            if twin is not None:
                return twin(*args)
        values = [v if v.ndim == 0 or (v.flags.aligned and v.dtype.isnative) else
                  np.require(v, v.dtype.newbyteorder("="), ["A"]) for v in given]
        self._check_shapes(values)
        keep: list[Any] = []
        argv = (ctypes.c_void_p * max(len(values), 1))()
        for k, value in enumerate(values):
            argv[k] = _pass(value, keep)
        ranks = [a.type.ndim for a in program.outputs]
        out_dims = (ctypes.c_int64 * max(sum(ranks), 1))()
        info = (ctypes.c_int64 * INFO_SLOTS)()
        failed = self._shapes(ctypes.addressof(argv), ctypes.addressof(out_dims),
                              ctypes.addressof(info))
        if failed < 0:
            name, message = SHAPE_ERRORS[failed]
            raise kernel_exception(name, message)
        if failed and self.twin is not None:
            return self.twin(*args)
        if failed:
            check = program.checks[failed - 1]
            raise kernel_exception(check.error, fill(check.message, info[1], info[2]))
        outputs, start = [], 0
        returned = returned_arguments(program)  # ``return a``: that very array
        for j, (atom, rank) in enumerate(zip(program.outputs, ranks, strict=True)):
            outputs.append(given[returned[j]] if j in returned else
                           np.empty(tuple(out_dims[start:start + rank]), atom.type.dtype))
            start += rank
        outv = (ctypes.c_void_p * max(len(outputs), 1))(*(o.ctypes.data for o in outputs))
        scratch, scratch_addr = _acquire(info[0])
        hook = self.poll
        poll = _NEVER if hook is None else _POLL(lambda _: 1 if hook() else 0)
        runtime = Runtime(poll)
        if self.threads:
            runtime.parallel_for = _parallel_for(self.threads)
            runtime.threads = self.threads
        runtime.random = _RANDOM_HOOK
        runtime.argument_bits = argument_bits
        code = self._kernel(ctypes.addressof(argv), ctypes.addressof(outv),
                            ctypes.addressof(out_dims), scratch_addr, ctypes.addressof(runtime))
        _release(scratch)
        del keep
        if code:
            errors = runtime_errors(program)
            if 0 <= code - FIRST_PROGRAM_ERROR < len(errors):
                name, message = errors[code - FIRST_PROGRAM_ERROR]
            else:
                name, message = KERNEL_ERRORS.get(code, ("RuntimeError", f"kernel error {code}"))
            raise kernel_exception(name, fill(message, *runtime.detail))
        for i, _ in program.writebacks:  # writes into a copy go back (NumPy converts)
            if values[i] is not given[i]:
                np.copyto(given[i], values[i])
        start = 0
        for j, rank in enumerate(ranks):  # sizes known only while running: what P wrote
            if rank and any(bound_symbols(d) for d in program.outputs[j].type.shape):
                dims = tuple(out_dims[start:start + rank])
                outputs[j] = outputs[j].reshape(-1)[:int(np.prod(dims))].reshape(dims)
            start += rank
        return outputs

    def _check_arguments(self, values: list[np.ndarray]) -> JitKernel | None:
        """What the wrapper checks before calling: arrays the kernel writes take writes,
        and arguments read after an overlapping one is written share no memory, unless
        they are one array that an alias twin takes (returned, to run instead)."""
        runtime = slow_paths.runtime()
        names = self.param_names or [f"argument {k}" for k in range(len(values))]
        for i, _ in self.program.writebacks:
            if values[i].ndim and not values[i].flags.writeable:
                raise runtime["_written_error"](names[i], True)
            if values[i].ndim and _self_overlapping(values[i]):
                raise runtime["_written_error"](names[i], False)
        if self._orders is None:
            self._orders = order_conflicts(self.program)
        for written, read in self._orders:
            twins = self.alias_twins or {}
            twin = twins.get((written, read, aliasing(values[written], values[read])))
            if twin is not None:
                return twin
            runtime["_order_error"](values[written], values[read], names[written], names[read])
        return None

    def _check_shapes(self, values: list[np.ndarray]) -> None:
        """What the wrapper checks before calling: every input's dims match its type."""
        try:
            env = bind_dims(self.program, tuple(values))
        except KernelError:
            return  # a size computed from the arguments meets an error: P_shapes raises it
        for k, (var, value) in enumerate(zip(self.program.inputs, values, strict=True)):
            for axis, dim in enumerate(var.type.shape):
                if dim.symbols() <= env.keys() and dim.evaluate(env) != value.shape[axis]:
                    raise ValueError(f"argument {k}: axis {axis} has size {value.shape[axis]}, "
                                     f"expected {dim} = {dim.evaluate(env)}")


def _numpy_loop_table(programs: Sequence[Program]) -> int:
    """The address of the pointer to this process's table of NumPy loops
    (:mod:`aotc.ops.numpy_loops`), with the loops ``programs`` call resolved (once each), as
    a generated module resolves its own at import."""
    used = set().union(*map(numpy_loops_called, programs)) - _RESOLVED
    if used:
        resolve = slow_paths.runtime()["_numpy_loop_table"]
        table, _ = resolve(numpy_loops.table_spec(used), "aotc.jit")
        for k, pointer in enumerate(table):
            if pointer:
                _LOOP_TABLE[k] = pointer
        _RESOLVED.update(used)
    return ctypes.addressof(_LOOP_TABLE_ADDRESS)


#: This process's table of NumPy loops, the pointer to it, and the loops it holds.
_LOOP_TABLE = (ctypes.c_void_p * (2 * len(numpy_loops.LOOPS)))()
_LOOP_TABLE_ADDRESS = ctypes.c_void_p(ctypes.addressof(_LOOP_TABLE))
_RESOLVED: set[str] = set()


def _self_overlapping(a: np.ndarray) -> bool:
    """Whether two elements of ``a`` may share bytes (the wrapper's test: axes sorted by
    stride must each step over the extent of the axes inside them)."""
    if a.size == 0:
        return False
    extent = a.itemsize
    for stride, size in sorted((abs(st), n) for st, n in zip(a.strides, a.shape, strict=True)
                               if n > 1):
        if stride < extent:
            return True
        extent += stride * (size - 1)
    return False


def _argument(k: int, dtype: np.dtype, ndim: int, arg: Any) -> np.ndarray:
    if ndim == 0:
        value = np.array(arg, dtype=dtype)
        if value.ndim:
            raise TypeError(f"argument {k}: expected a scalar, got shape {value.shape}")
        return value
    value = arg if isinstance(arg, np.ndarray) else np.asarray(arg, dtype=dtype)
    if value.dtype.newbyteorder("=") != dtype or value.ndim != ndim:
        raise TypeError(f"argument {k}: expected a {ndim}-d {dtype} array, got a "
                        f"{value.ndim}-d {value.dtype} array")
    return value


def _pass(value: np.ndarray, keep: list[Any]) -> int:
    """The ``argv`` entry for ``value``: the scalar's address or an ``aotc_array``'s."""
    if value.ndim == 0:
        keep.append(value)
        return value.ctypes.data
    shape = (ctypes.c_int64 * value.ndim)(*value.shape)
    strides = (ctypes.c_int64 * value.ndim)(*value.strides)
    struct = AotcArray(value.ctypes.data, shape, strides)
    keep.extend((value, shape, strides, struct))
    return ctypes.addressof(struct)


#: Scratch up to this size is kept between calls (per thread), as the wrapper does: a
#: fresh block costs the OS zeroing its pages on every call.
_KEEP = 1 << 28
_KEPT = threading.local()


def _acquire(nbytes: int) -> tuple[np.ndarray | None, int | None]:
    """``nbytes`` of scratch aligned to ``SCRATCH_ALIGN`` (NULL when 0): the thread's
    kept block when it is free and large enough (a call made while a kernel runs, from
    its poll hook, takes a fresh one)."""
    if nbytes <= 0:
        return None, None
    buffer: np.ndarray | None = getattr(_KEPT, "buffer", None)
    if buffer is None or buffer.nbytes < nbytes + SCRATCH_ALIGN:
        buffer = np.empty(nbytes + SCRATCH_ALIGN, np.uint8)
    _KEPT.buffer = None
    addr = buffer.ctypes.data
    return buffer, (addr + SCRATCH_ALIGN - 1) // SCRATCH_ALIGN * SCRATCH_ALIGN


def _release(buffer: np.ndarray | None) -> None:
    """Keep ``buffer`` for the thread's next call, when it is not too large to keep."""
    if buffer is not None and buffer.nbytes <= _KEEP + SCRATCH_ALIGN:
        _KEPT.buffer = buffer
