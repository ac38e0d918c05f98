"""The slow paths of every generated module, in plain Python: choosing the CPU target,
noticing an edited source, sizing and sharing the thread pool, and building the
exceptions a failed call raises.

Why not Cython: none of this runs on a successful call, and Cython turns each line of it
into dozens of lines of C, which gcc spent a quarter of a module's build on. The shared
runtime (runtime.pyx.in) embeds this file's text and runs it at import, with the
constants below set; a module passes what is its own (its name, its targets).
"""

import os as _os
import re as _re
import struct as _struct
import typing as _typing

import numpy as _np

if _typing.TYPE_CHECKING:  # set by the runtime (runtime.pyx.in) before running this file
    Message = tuple[type[Exception], str]
    Targets = tuple[tuple[str, tuple[str, ...]], ...]
    _SHORT_NAMES: dict[str, str] = {}
    _KERNEL_ERRORS: dict[int, Message] = {}
    _SHAPE_ERRORS: dict[int, Message] = {}
    _FIRST_PROGRAM_ERROR = 0


def _choose_target(module: str, targets: "Targets", cpu_has: frozenset[str]) -> int:
    """The target of ``module`` to run: ``AOTC_CPU`` when set, else the one with the most
    features among those this CPU (and OS) has (``cpu_has``). A target whose features
    are missing never runs."""
    names = [name for name, _ in targets]
    forced = _os.environ.get("AOTC_CPU", "").strip()
    if forced and forced not in names:
        raise ImportError(f"AOTC_CPU={forced}, but {module} carries code for "
                          f"{', '.join(names)} only; unset AOTC_CPU or pick one of those")
    candidates = [names.index(forced)] if forced else list(range(len(targets)))
    usable = [k for k in candidates if cpu_has.issuperset(targets[k][1])]
    if usable:
        return max(usable, key=lambda k: (len(targets[k][1]), k))
    name, needs = targets[candidates[0]]
    missing = [f for f in needs if f not in cpu_has]
    how = f"AOTC_CPU={forced} asks for" if forced else f"{module} was compiled for"
    raise ImportError(f"{how} CPU target {name}, which needs {', '.join(needs)}; this CPU "
                      f"(or OS) lacks {', '.join(missing)}. Rebuild it for this machine with "
                      "target = \"native\", or for any CPU with the default targets (no "
                      "target setting)")


def _edited_source(extension: str, source_name: str) -> str | None:
    """The kernel source ``source_name`` next to the ``extension`` file (an in-place or
    editable build) when it was written after the extension: that source runs instead,
    never stale machine code."""
    path = _os.path.join(_os.path.dirname(extension), source_name)
    try:
        edited = _os.stat(path).st_mtime_ns > _os.stat(extension).st_mtime_ns
    except OSError:
        return None  # an installed wheel: no source next to the extension
    return path if edited else None


#: Where the process's one thread pool is published (the first aotc module imported
#: shares its own; the name changes when the C side's aotc_pool_ops does).
_POOL_HOME = "_aotc_pool_v1"


def _shared_pool(capsule: object) -> object:
    """The capsule of the process's thread pool: ``capsule`` (this module's) if no aotc
    module was imported before, else the one the first module published; registers
    the threadpoolctl controller once."""
    import sys
    import types

    home = sys.modules.get(_POOL_HOME)
    if home is None:
        home = types.ModuleType(_POOL_HOME, "The thread pool every aotc module shares.")
        home.capsule = capsule  # type: ignore[attr-defined]
        sys.modules[_POOL_HOME] = home
        _register_threadpoolctl()
    return home.capsule


def _default_threads(environ: "_typing.Mapping[str, str] | None" = None,
                     cgroup: str = "/sys/fs/cgroup", cpus: "int | None" = None) -> int:
    """The pool's size: ``AOTC_NUM_THREADS`` when set, else the CPUs this process may
    run on: its affinity mask (``cpus``), capped by a cgroup CPU quota (a container
    started with ``--cpus=2`` on a 64-core host gets 2), v2's ``cpu.max`` or v1's
    ``cpu.cfs_quota_us``/``cpu.cfs_period_us``, rounded up."""
    environ = _os.environ if environ is None else environ
    text = environ.get("AOTC_NUM_THREADS", "").strip()
    if text:
        try:
            return min(max(int(text), 1), 256)
        except ValueError:
            raise ValueError(f"AOTC_NUM_THREADS={text!r}: expected a number of threads") \
                from None
    if cpus is None:
        cpus = len(_os.sched_getaffinity(0)) if hasattr(_os, "sched_getaffinity") else \
            (_os.cpu_count() or 1)
    quota = _cgroup_cpus(cgroup)
    return max(1, min(cpus, quota) if quota else cpus)


def _cgroup_cpus(root: str) -> "int | None":
    """The CPUs a cgroup quota allows (rounded up), or None without a quota."""
    def read(name: str) -> "list[str] | None":
        try:
            with open(_os.path.join(root, name)) as f:
                return f.read().split()
        except (OSError, UnicodeDecodeError):
            return None

    pair = read("cpu.max")  # v2: "max 100000" or "200000 100000"
    if pair is None:  # v1: two files
        v1_quota = read("cpu/cpu.cfs_quota_us") or read("cpu.cfs_quota_us")
        v1_period = read("cpu/cpu.cfs_period_us") or read("cpu.cfs_period_us")
        pair = v1_quota + v1_period if v1_quota and v1_period else None
    if pair is None or len(pair) < 2 or pair[0] in ("max", "-1"):
        return None
    try:
        quota, period = int(pair[0]), int(pair[1])
        if quota <= 0 or period <= 0:
            return None
        return max(1, -(-quota // period))
    except ValueError:
        return None


def _register_threadpoolctl() -> None:
    """Make ``threadpoolctl`` see and limit the pool (``threadpool_limits(1)`` limits
    aotc as it limits BLAS and OpenMP), when threadpoolctl is installed: a controller
    for every loaded library that exports aotc's two threadpool functions."""
    try:
        import threadpoolctl
    except ImportError:
        return

    class AotcController(threadpoolctl.LibController):  # type: ignore[misc]
        user_api = internal_api = "aotc"
        filename_prefixes = ("",)  # any name: an aotc module is known by its symbols
        check_symbols = ("aotc_threadpool_get_num_threads",)

        def _function(self, name: str) -> "_typing.Any":
            return getattr(self.dynlib, name, None)

        def get_num_threads(self) -> "int | None":
            get = self._function("aotc_threadpool_get_num_threads")
            return None if get is None else int(get())

        def set_num_threads(self, num_threads: int) -> None:
            set_ = self._function("aotc_threadpool_set_num_threads")
            if set_ is not None:
                set_(int(num_threads))

        def get_version(self) -> "str | None":
            return None

    threadpoolctl.register(AotcController)


_TOKEN = _re.compile(r"\{(lhs|rhs|v2|v3)(?:!([a-zA-Z?])(r?))?(:[^{}]*)?\}")
_SLOTS = {"lhs": 0, "rhs": 1, "v2": 2, "v3": 3}


def _fill(message: str, *values: int) -> str:
    """The message with the kernel's values in its tokens (aotc.tracing.messages.fill: keep the
    two the same): a dtype character (floats as a double's bits), r for repr, a spec."""
    def one(match: _re.Match[str]) -> str:
        value: object = values[_SLOTS[match.group(1)]]
        spec = (match.group(4) or ":")[1:]
        if match.group(2) is None:
            return format(value, spec)
        dtype = _np.dtype(match.group(2))
        if dtype.kind == "f":
            value = _struct.unpack("<d", _struct.pack("<q", value))[0]
        scalar = dtype.type(value)
        return repr(scalar) if match.group(3) else format(scalar, spec)
    return _TOKEN.sub(one, message)


#: NumPy's errors that a kernel cannot name: it raises their builtin base with the
#: class's name as the message's prefix (``"LinAlgError: Singular matrix"``), and the
#: call raises the class itself, as NumPy would.
_NUMPY_ERRORS = {"LinAlgError: ": _np.linalg.LinAlgError}


def _exception(error: type[Exception], message: str) -> Exception:
    """``error(message)``, or the NumPy error the message names (a subclass of it). A
    KeyError's message is its key, as Python's is (``KeyError(5)``, not ``'5'``)."""
    for prefix, cls in _NUMPY_ERRORS.items():
        if message.startswith(prefix) and issubclass(cls, error):
            return cls(message[len(prefix):])
    if error is KeyError:
        import ast
        try:
            return KeyError(ast.literal_eval(message))
        except (ValueError, SyntaxError):
            pass
    return error(message)


def _check_error(rc: int, lhs: int, rhs: int, checks: "tuple[Message, ...]") -> Exception:
    """The exception of a failed size check ``rc`` (the shapes function's code)."""
    if rc in _SHAPE_ERRORS:
        error, message = _SHAPE_ERRORS[rc]
        return error(message)
    if not 1 <= rc <= len(checks):
        return RuntimeError(f"aotc: size check {rc} failed (lhs={lhs}, rhs={rhs})")
    error, message = checks[rc - 1]
    return _exception(error, _fill(message, lhs, rhs))


def _kernel_error(rc: int, errors: "tuple[Message, ...]", *detail: int) -> Exception:
    """The exception of a kernel that returned ``rc``: the program's own (raise, check)
    or the runtime's, with the four values the kernel left in ``detail``."""
    if 0 <= rc - _FIRST_PROGRAM_ERROR < len(errors):
        error, message = errors[rc - _FIRST_PROGRAM_ERROR]
    else:
        error, message = _KERNEL_ERRORS.get(rc, (RuntimeError,
                                                 f"aotc kernel failed with code {rc}"))
    return _exception(error, _fill(message, *detail))


def _written_error(name: str, read_only: bool) -> ValueError:
    """Why parameter ``name``, which the kernel writes into, cannot take the writes."""
    if read_only:
        return ValueError(f"assignment destination is read-only (parameter '{name}')")
    return ValueError(
        f"parameter '{name}' has elements that share memory (a stride-0 or overlapping "
        "as_strided view) and the kernel writes into it; pass a copy "
        f"({name}.copy()) and read the result from that")


def _order_error(written: object, read: object, wname: str, rname: str) -> None:
    """The kernel reads ``read`` after it starts writing ``written``: with shared memory,
    Python would see the writes in those reads and the compiled kernel does not."""
    if not _np.may_share_memory(written, read):
        return
    try:
        shared = _np.shares_memory(written, read, max_work=1000)  # type: ignore[arg-type]
    except _np.exceptions.TooHardError:
        shared = True
    if shared:
        raise ValueError(
            f"parameters '{wname}' and '{rname}' share memory, and the kernel reads "
            f"'{rname}' after it writes '{wname}': Python would see those writes in the "
            f"reads, the compiled kernel reads '{rname}' as it was at the call; pass a "
            f"copy ({rname}.copy())")


def _describe(o: object) -> str:
    """How a mismatching argument is shown in the TypeError: ``f32[:, :] array (2, 3)``."""
    if isinstance(o, _np.ndarray):
        name = _SHORT_NAMES.get(o.dtype.str.replace(">", "<").replace("=", "<"), str(o.dtype))
        dims = ", ".join([":"] * o.ndim)
        return f"{name}[{dims}] array of shape {o.shape}" if o.ndim else f"{name} 0-d array"
    if isinstance(o, _np.generic):
        return f"{_SHORT_NAMES.get(o.dtype.str, str(o.dtype))} scalar"
    return "None" if o is None else type(o).__name__


class _Missing:
    """An optional parameter the caller did not give (some overloads do not take it)."""

    def __repr__(self) -> str:
        return "<not given>"


_MISSING = _Missing()


def _no_match(name: str, accepted: tuple[str, ...], names: tuple[str, ...],
              args: tuple[object, ...]) -> _typing.NoReturn:
    """Raise the TypeError of a call no signature accepts: what was given and what is."""
    given = [(n, a) for n, a in zip(names, args, strict=True) if a is not _MISSING]
    for n, a in given:
        if isinstance(a, _np.ndarray) and type(a) not in (_np.ndarray, _np.memmap):
            kind = type(a)
            fill = (f" (for a masked array, fill the masked values first: {n}.filled(value))"
                    if isinstance(a, _np.ma.MaskedArray) else "")
            raise TypeError(
                f"{name}(): parameter '{n}' is a {kind.__module__}.{kind.__qualname__}, an "
                "ndarray subclass whose meaning a compiled kernel would drop; pass "
                f"np.asarray({n}){fill}")
    got = ", ".join([f"{n}: {_describe(a)}" for n, a in given])
    lines = [f"{name}(): no signature matches the arguments", "accepted:"]
    lines += [f"    {sig}" for sig in accepted]
    lines.append(f"got:\n    {name}({got})")
    raise TypeError("\n".join(lines))


#: What a kernel with a str parameter was compiled with for strings it does not compare
#: (aotc.packaging.string_choices.STAND_IN).
_STRING_STAND_IN = "\x00aotc-str\x00"


def _with_string(result: object, value: str) -> object:
    """A result with the stand-in's text replaced by the string passed (``s + "!"``)."""
    if isinstance(result, str):
        return result.replace(_STRING_STAND_IN, value)
    if type(result) in (tuple, list):
        return type(result)(_with_string(r, value) for r in result)  # type: ignore
    return result


def _string_call(name: str, param: str, position: int, table: "dict[str, object]",
                 args: tuple[object, ...], kwargs: "dict[str, object]") -> object:
    """Call the function compiled for the string given for ``param`` (argument
    ``position``, or a keyword; aotc.packaging.string_choices): ``table`` maps each
    string, and the stand-in, to a compiled function, or to why it did not build. For
    any other string the stand-in's runs, and an exception it raises shows the string
    where it shows the stand-in."""
    if len(args) > position:
        value, args = args[position], args[:position] + args[position + 1:]
    elif param in kwargs:
        value = kwargs.pop(param)
    else:
        raise TypeError(f"{name}() missing required argument: '{param}'")
    if not isinstance(value, str):
        raise TypeError(f"{name}(): parameter '{param}' takes a str, not "
                        f"{type(value).__name__}")
    chosen = table.get(value, table[_STRING_STAND_IN])
    if isinstance(chosen, str):
        raise ValueError(f"{name}(): {param}={value!r} was not compiled: {chosen}")
    try:
        return _with_string(chosen(*args, **kwargs), value)  # type: ignore[operator]
    except Exception as err:
        shown = [a.replace(repr(_STRING_STAND_IN), repr(value)).replace(_STRING_STAND_IN, value)
                 if isinstance(a, str) else a for a in err.args]
        if shown == list(err.args):
            raise
        raise type(err)(*shown) from None


def _numpy_loop_table(spec: "list[tuple[str, str, str] | None]",
                      module: str) -> "tuple[object, int]":
    """The table of NumPy gufunc loops the kernels call (``aotc.ops.numpy_loops``): for each
    ``(module, ufunc, types)``, the loop's function and data pointers, read from the
    ufunc object's public loop lists (NULL for a None slot, which no kernel calls).
    Returns the table (keep it alive) and its address. A loop this NumPy lacks is an
    ImportError naming it, never a call through NULL."""
    import ctypes
    import importlib

    class _UFunc(ctypes.Structure):  # the head of PyUFuncObject (NumPy's ufuncobject.h)
        _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p),
                    ("nin", ctypes.c_int), ("nout", ctypes.c_int), ("nargs", ctypes.c_int),
                    ("identity", ctypes.c_int), ("functions", ctypes.c_void_p),
                    ("data", ctypes.c_void_p), ("ntypes", ctypes.c_int),
                    ("reserved1", ctypes.c_int), ("name", ctypes.c_char_p),
                    ("types", ctypes.c_void_p)]

    table = (ctypes.c_void_p * (2 * len(spec)))()
    pointers = ctypes.POINTER(ctypes.c_void_p)
    for slot, wanted_loop in enumerate(spec):
        if wanted_loop is None:
            continue
        module, name, types = wanted_loop
        ufunc = getattr(importlib.import_module(module), name, None)
        wanted = [_np.dtype(c).num for c in types.replace("->", "")]
        head = _UFunc.from_address(id(ufunc)) if isinstance(ufunc, _np.ufunc) else None
        if head is None or head.nargs != len(wanted):
            raise ImportError(f"{module} needs NumPy's {module}.{name} loop {types}; "
                              f"this NumPy ({_np.__version__}) has no such gufunc")
        codes = ctypes.cast(head.types, ctypes.POINTER(ctypes.c_char))
        for k in range(head.ntypes):
            row = [codes[k * head.nargs + j][0] for j in range(head.nargs)]
            if row == wanted:
                table[2 * slot] = ctypes.cast(head.functions, pointers)[k]
                table[2 * slot + 1] = ctypes.cast(head.data, pointers)[k] if head.data \
                    else None  # (a ufunc made with no data at all)
                break
        else:
            raise ImportError(f"{module} needs NumPy's {module}.{name} loop {types}, "
                              f"which this NumPy ({_np.__version__}) lacks")
    return table, ctypes.addressof(table)


def _is_wide_numpy_scalar(value: object) -> bool:
    """A NumPy scalar (or 0-d array) of 8-byte components: what a weak scalar parameter
    with a strong twin overload defers to it (aotc.packaging.weak_scalars has the why;
    aotc.packaging.checks asks this one too)."""
    if isinstance(value, _np.generic) or (type(value) is _np.ndarray and value.ndim == 0):
        kind, size = value.dtype.kind, value.dtype.itemsize
        return kind in "iufc" and size // (1 + (kind == "c")) == 8
    return False


def _box_value(handle: int, kind: str, key: "tuple[str, ...]", value: "tuple[str, ...]",
               is_tuple: bool) -> object:
    """A list, set or dict a kernel returned (a box, aotc.ops.containers): its items
    read from the kernel's memory, which is then freed. A list is an array of its
    items (rows of a tuple's lanes, when they share a dtype), as a list a loop appends
    to is; a set a set and a dict a dict of NumPy scalars."""
    import ctypes

    header = (ctypes.c_int64 * 7).from_address(int(handle))
    data, count = header[1], header[2]
    lanes = (*key, *value)
    raw = _np.frombuffer(ctypes.string_at(data, count * 8 * len(lanes)) if count else b"",
                         dtype=_np.int64).reshape(count, len(lanes))
    columns = []
    for k, code in enumerate(lanes):
        dtype = _np.dtype(code)
        column = raw[:, k]
        if dtype.kind == "f":
            column = column.view(_np.float64)
        columns.append(column.astype(dtype))
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]
    for pointer in (data, header[4], int(handle)):
        libc.free(pointer)
    if kind == "list" and not is_tuple:
        return columns[0]
    if kind == "list" and len({c.dtype for c in columns}) == 1:
        return _np.stack(columns, axis=1)
    nkey = len(key)
    keys = [tuple(c[i] for c in columns[:nkey]) if is_tuple else columns[0][i]
            for i in range(count)]
    if kind == "list":
        return keys
    if kind == "set":
        return set(keys)
    vals = [columns[nkey][i] if len(value) == 1 else tuple(c[i] for c in columns[nkey:])
            for i in range(count)]
    return dict(zip(keys, vals, strict=True))
