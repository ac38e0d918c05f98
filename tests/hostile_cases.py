"""Hostile calls into a compiled module: every class of input that once corrupted memory,
lost a write or killed the interpreter, as a caller in deployment might pass it.

``KERNELS`` is the source of the kernel module ``tests/test_hostile.py`` builds; each
case below is a function ``case(k, src)`` of the compiled module ``k`` and the same
source imported uncompiled (``src``, running on NumPy), raising AssertionError when
the compiled module does not give NumPy's result or the documented exception. The
cases run in a child process (:func:`main`), so a crash fails one test instead of
killing the run.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

KERNELS = '''
"""Kernels for hostile calls."""
import numpy as np

import aotc
from aotc import f64, i64, u8, u64


@aotc.export
def tail(x: f64[:], m: i64) -> f64[:]:
    return x[m:] + 0.0


@aotc.export
def head(x: f64[:], m: i64) -> f64[:]:
    return x[:m] + 0.0


@aotc.export
def window(x: f64[:], a: i64, b: i64) -> f64[:]:
    return x[a:b] * 1.0


@aotc.export
def backwards(x: f64[:], a: i64, b: i64) -> f64[:]:
    return x[a:b:-1] * 1.0


@aotc.export
def set_tail(x: f64[:], m: i64) -> None:
    x[m:] = -1.0


@aotc.export
def cum_ones(n: i64) -> f64:
    return np.sum(np.cumsum(np.ones(n)))


@aotc.export
def zeros_plus(n: i64) -> f64:
    return np.sum(np.zeros(n) + 1)


@aotc.export
def sized(n: i64):
    return (np.zeros(n), np.ones((2, n)), np.empty(n), np.full(n, 7.0), np.eye(n),
            np.arange(n), np.linspace(0.0, 1.0, n))


@aotc.export
def guarded(n: i64) -> f64:
    s = 0.0
    if n > 0:
        s = np.sum(np.ones(n))
    return s


@aotc.export
def guarded_pair(x: f64[:], y: f64[:], n: i64) -> f64:
    t = 0.0
    for i in range(n):
        t += np.sum(x + y)
    return t


@aotc.export
def spaced(n: i64) -> f64[:]:
    return np.linspace(0.0, 1.0, n)


@aotc.export
def grid(n: i64, m: i64) -> f64[:, :]:
    return np.zeros((n, m)) + 1.0


@aotc.export
def tile_n(x: f64[:], n: i64) -> f64[:]:
    return np.tile(x, n)


@aotc.export
def repeat_n(x: f64[:], n: i64) -> f64[:]:
    return np.repeat(x, n)


@aotc.export
def square_zeros(n: i64) -> f64[:]:
    return np.zeros(n * n)


@aotc.export
def unsigned_size(n: u64) -> u8[:]:
    return np.zeros(n, np.uint8)


@aotc.export
def count_to(n: i64) -> i64:
    total = 0
    for i in range(n):
        total += i
    return total


@aotc.export
def add_one(x: f64[:]) -> None:
    x += 1.0


@aotc.export
def bump_first(x: f64[:]) -> None:
    x[0] += 1.0


@aotc.export
def scale_rows(x: f64[:, :]) -> None:
    x *= 2.0


@aotc.export
def add_into(x: f64[:], y: f64[:]) -> None:
    x += y


@aotc.export
def axpy(a: f64, x: f64[:], y: f64[:]) -> None:
    """One fused loop reads x and writes y: one statement, so NumPy's answer."""
    y += a * x


@aotc.export
def axpy_twice(a: f64, x: f64[:], y: f64[:]) -> None:
    y += a * x
    y += x  # reads x after y was written: Python sees the write when they overlap


@aotc.export
def total(x: f64[:]) -> f64:
    return np.sum(x)


@aotc.export
def twice(x: f64[:, :]) -> f64[:, :]:
    return x * 2.0


@aotc.export
def spin(n: i64) -> i64:
    k = n
    while k >= 0:
        k = (k + 1) % 7
    return k


@aotc.export
def spin_arrays(x: f64[:]) -> f64:
    s = x[0]
    while s >= 0.0:
        s = np.sum(x * 0.5) + 1.0
    return s


@aotc.export
def spin_nested(x: f64[:]) -> f64:
    """Inner runs shorter than a chunk poll as they add up to one: the outer loop counts
    each as one step, and polls only every ~2*10^4 runs (seconds here)."""
    s = 0.0
    for _ in range(2**40):
        for i in range(x.shape[0]):
            s = s * 0.5 + x[i]
    return s


@aotc.export
def big_work(n: i64) -> f64:
    return np.sum(np.sqrt(np.arange(n) * 1.0))


@aotc.export
def long_scalar_loop(n: i64) -> f64:
    s = 0.0
    for i in range(n):
        s = s * 0.5 + 1.0
    return s


@aotc.export
def third(x: f64[:]) -> f64:
    if x.shape[0] < 3:
        raise ValueError("need at least 3 points")
    return x[2]


@aotc.export
def third_asserted(x: f64[:], y: f64[:]) -> f64:
    assert len(x) + 1 > len(y), "y is too long"
    return x[2] + y[0]


@aotc.export
def inverse(a: f64[:, :]) -> f64[:, :]:
    return np.linalg.inv(a)


@aotc.export
def beyond_int64(x: f64[:], which: i64) -> f64:
    """Integers in the source that no array reaches: indices and a slice step beyond
    int64 (x[2**70] read x[0], x[1::2**70] killed the process in LLVM's linker)."""
    if which == 0:
        return x[2**70]
    if which == 1:
        return x[-2**63]
    return x[1::2**70].sum() + x[2**70:].sum() + x[::-(2**63)].sum()
'''

Check = Callable[[Any, Any], None]
CASES: dict[str, Check] = {}

X = np.arange(6.0)


def case(fn: Check) -> Check:
    CASES[fn.__name__] = fn
    return fn


def raises(error: type[BaseException], pattern: str, call: Callable[[], Any]) -> None:
    try:
        call()
    except error as err:
        assert re.search(pattern, str(err)), f"{type(err).__name__}: {err} !~ {pattern!r}"
        return
    except BaseException as err:
        raise AssertionError(f"expected {error.__name__}, got {type(err).__name__}: {err}") \
            from err
    raise AssertionError(f"expected {error.__name__}, nothing was raised")


def same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    native = [a.dtype.newbyteorder("=") for a in (got, want)]  # results are native-order
    assert native[0] == native[1] and got.shape == want.shape, \
        f"{got.dtype}{got.shape} != {want.dtype}{want.shape}"
    assert np.array_equal(got, want, equal_nan=True), f"{got} != {want}"


@case
def integers_beyond_int64(k: Any, src: Any) -> None:
    """NumPy's IndexError for an index no int64 holds, and for one beyond the axis; a
    step beyond int64 picks what NumPy picks."""
    for which, message in ((0, "only integers, slices"),
                           (1, "index -9223372036854775808 is out of bounds for axis 0")):
        raises(IndexError, message, lambda w=which: src.beyond_int64(X, w))
        raises(IndexError, message, lambda w=which: k.beyond_int64(X, w))
    same(k.beyond_int64(X, 2), src.beyond_int64(X, 2))


# -- 1. negative integers as bounds and sizes ---------------------------------------------

@case
def negative_slice_bounds(k: Any, src: Any) -> None:
    for m in (-1, -4, -6, -7, -10**9, -2**63, 0, 3, 6, 7, 10**9, 2**63 - 1):
        same(k.tail(X, m), src.tail(X, m))
        same(k.head(X, m), src.head(X, m))
    for a, b in [(-3, -1), (-1, -3), (2, -2), (-100, 100), (100, -100), (5, 5), (-2**63, 3)]:
        same(k.window(X, a, b), src.window(X, a, b))
        same(k.backwards(X, a, b), src.backwards(X, a, b))
    same(k.tail(X[:0], -3), src.tail(X[:0], -3))


@case
def negative_slice_write(k: Any, src: Any) -> None:
    for m in (-4, -1, -100, 0, 2, 100):
        base, expected = np.arange(10.0), np.arange(10.0)
        k.set_tail(base[2:8], m)  # writes through a view stay inside the view
        src.set_tail(expected[2:8], m)
        same(base, expected)


@case
def negative_sizes(k: Any, src: Any) -> None:
    for fn in (k.cum_ones, k.zeros_plus, k.sized):
        raises(ValueError, "negative dimensions are not allowed", lambda fn=fn: fn(-1))
    raises(ValueError, "negative dimensions are not allowed", lambda: k.grid(3, -2))
    raises(ValueError, r"Number of samples, -2, must be non-negative\.", lambda: k.spaced(-2))
    same(k.spaced(0), src.spaced(0))
    raises(ValueError, "negative dimensions are not allowed", lambda: k.tile_n(X, -1))
    raises(ValueError, "negative dimensions are not allowed", lambda: k.repeat_n(X, -1))
    assert k.zeros_plus(0) == 0.0 and k.cum_ones(3) == 6.0
    for j, (got, want) in enumerate(zip(k.sized(3), src.sized(3), strict=True)):
        same(got, want if j != 2 else np.zeros(3))  # 2: np.empty, whose values are any


@case
def guards_run_before_the_checks_after_them(k: Any, src: Any) -> None:
    """A raise on sizes comes first, as in Python: not the IndexError of code after it."""
    for kernel in (k, src):
        raises(ValueError, "^need at least 3 points$", lambda kernel=kernel: kernel.third(X[:2]))
        raises(AssertionError, "^y is too long$",
               lambda kernel=kernel: kernel.third_asserted(X[:2], X[:3]))
        raises(IndexError, "index 2 is out of bounds",
               lambda kernel=kernel: kernel.third_asserted(X[:2], X[:1]))
    same(k.third(X), src.third(X))
    same(k.third_asserted(X, X[:6]), src.third_asserted(X, X[:6]))


@case
def linalg_errors_are_numpys(k: Any, src: Any) -> None:
    for kernel in (k, src):
        raises(np.linalg.LinAlgError, "^Singular matrix$",
               lambda kernel=kernel: kernel.inverse(np.zeros((2, 2))))
    same(k.inverse(2 * np.eye(3)), src.inverse(2 * np.eye(3)))


@case
def checks_hold_only_where_their_code_runs(k: Any, src: Any) -> None:
    """A size that is invalid on a path not taken is no error (as in NumPy)."""
    for n in (-3, 0, 4):
        assert k.guarded(n) == src.guarded(n)
    x, y = np.ones(3), np.ones(4)
    assert k.guarded_pair(x, y, 0) == 0.0  # the loop never runs: no broadcast error
    raises(ValueError, r"could not be broadcast together with shapes \(3,\) \(4,\)",
           lambda: k.guarded_pair(x, y, 2))
    assert k.guarded_pair(x, x, 2) == 12.0


@case
def negative_loop_bounds(k: Any, src: Any) -> None:
    for n in (-5, -1, 0, 1, 10):
        assert k.count_to(n) == src.count_to(n)


# -- 2. size arithmetic that wraps around -------------------------------------------------

@case
def sizes_too_big(k: Any, src: Any) -> None:
    too_big = "array is too big"
    raises(ValueError, too_big, lambda: k.cum_ones(2**61 + 1))
    raises(ValueError, too_big, lambda: k.tile_n(X, 2**62))
    raises(ValueError, too_big, lambda: k.square_zeros(2**32))
    raises(ValueError, too_big, lambda: k.zeros_plus(2**63 - 1))
    raises(ValueError, too_big, lambda: k.grid(2**40, 2**40))
    raises(ValueError, too_big, lambda: k.repeat_n(X, 2**62))
    raises(MemoryError, "", lambda: k.unsigned_size(2**62))
    raises(MemoryError, "", lambda: k.unsigned_size(2**64 - 1))  # sizes saturate at 2**61


# -- 3. read-only memory ------------------------------------------------------------------

@case
def read_only_arguments(k: Any, src: Any) -> None:
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    immutable = bytes(24)
    for x in (frozen, np.broadcast_to(np.float64(2.0), (3,)), np.frombuffer(immutable)):
        before = x.copy()
        raises(ValueError, r"assignment destination is read-only \(parameter 'x'\)",
               lambda x=x: k.add_one(x))
        same(x, before)
    assert immutable == bytes(24)
    assert k.total(frozen) == 0.0  # reading a read-only array is fine


# -- 4. writes through copies ---------------------------------------------------------------

@case
def byte_swapped_unaligned_and_packed(k: Any, src: Any) -> None:
    swapped = np.arange(3, dtype=">f8")
    unaligned = np.frombuffer(bytearray(25), np.float64, offset=1, count=3)
    packed = np.zeros(3, dtype=[("a", "f8"), ("b", "u1")])  # 9-byte records
    for x in (swapped, unaligned, packed["a"]):
        want = np.array(x, dtype=np.float64) + 1.0
        k.add_one(x)
        same(np.array(x, dtype=np.float64), want)
    assert unaligned.flags.writeable and not unaligned.flags.aligned
    same(packed["b"], np.zeros(3, np.uint8))


# -- 5. arrays that overlap themselves or each other --------------------------------------

@case
def self_overlapping_arguments(k: Any, src: Any) -> None:
    b = np.zeros(4)
    stride0 = as_strided(b, (6,), (0,), writeable=True)
    rows = as_strided(b, (3, 2), (8, 8), writeable=True)  # rows [b0 b1], [b1 b2], [b2 b3]
    raises(ValueError, r"parameter 'x' has elements that share memory",
           lambda: k.bump_first(stride0))
    raises(ValueError, "share memory", lambda: k.scale_rows(rows))
    same(b, np.zeros(4))
    every_other = as_strided(b, (2,), (16,), writeable=True)  # disjoint: fine
    k.add_one(every_other)
    same(b, np.array([1.0, 0.0, 1.0, 0.0]))
    # Overlapping *different* arguments get NumPy's answer.
    for shift in (1, -1, 0):
        mine, theirs = np.arange(8.0), np.arange(8.0)
        lo, hi = (1, 7) if shift >= 0 else (0, 6)
        k.add_into(mine[lo:hi], mine[lo - shift:hi - shift])
        src.add_into(theirs[lo:hi], theirs[lo - shift:hi - shift])
        same(mine, theirs)
        k.axpy(2.0, mine[lo - shift:hi - shift], mine[lo:hi])
        src.axpy(2.0, theirs[lo - shift:hi - shift], theirs[lo:hi])
        same(mine, theirs)
    raises(ValueError, "share memory", lambda: k.axpy_twice(2.0, b[1:], b[:-1]))
    same(b, np.array([1.0, 0.0, 1.0, 0.0]))  # refused before anything was written
    mine, theirs = np.arange(4.0), np.arange(4.0)
    k.axpy_twice(2.0, mine, mine)  # one array twice: its alias twin, Python's answer
    src.axpy_twice(2.0, theirs, theirs)
    same(mine, theirs)
    c = np.ones(3)
    k.axpy_twice(2.0, c, np.zeros(3))  # no shared memory: no error
    same(c, np.ones(3))


# -- 6. ndarray subclasses ----------------------------------------------------------------

@case
def subclasses(k: Any, src: Any) -> None:
    masked = np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    raises(TypeError, r"numpy\.ma.*MaskedArray.*np\.asarray\(x\).*filled", lambda: k.total(masked))
    raises(TypeError, r"matrix.*np\.asarray\(x\)", lambda: k.twice(np.matrix([[1.0, 2.0]])))
    assert k.total(np.asarray(masked.filled(0.0))) == 4.0
    out = k.twice(np.asarray(np.matrix([[1.0, 2.0]])))
    assert type(out) is np.ndarray


@case
def memmap_is_plain(k: Any, src: Any) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        m = np.memmap(os.path.join(tmp, "m.dat"), dtype=np.float64, mode="w+", shape=(4,))
        m[:] = [1.0, 2.0, 3.0, 4.0]
        assert k.total(m) == 10.0
        k.add_one(m)
        same(np.asarray(m), np.array([2.0, 3.0, 4.0, 5.0]))
        del m


# -- 7. interrupts and the GIL ------------------------------------------------------------

class Alarm(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise Alarm("stopped by a signal handler")


@case
def endless_loop_stops_on_signal(k: Any, src: Any) -> None:
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for run in (lambda: k.spin(1), lambda: k.spin_arrays(np.ones(1000)),
                    lambda: k.spin_nested(np.ones(120_000))):
            started = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            raises(Alarm, "stopped by a signal handler", run)
            assert time.monotonic() - started < 5.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@case
def ctrl_c_raises_keyboard_interrupt(k: Any, src: Any) -> None:
    # Python's own Ctrl-C handler, as in a terminal: a shell running this suite in the
    # background (or a CI runner) may have started it with SIGINT ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        raises(KeyboardInterrupt, "", lambda: k.spin(1))
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert k.count_to(10) == 45  # the module still works afterwards


def _lasting(kernel: Callable[[int], Any], seconds: float) -> int:
    """An ``n`` for which ``kernel(n)`` runs about ``seconds`` on this machine (emulated,
    a fixed size took 30 times as long as natively)."""
    n = 1 << 20
    while n < 1 << 34:
        started = time.monotonic()
        kernel(n)
        elapsed = time.monotonic() - started
        if elapsed > seconds / 16:
            return int(n * seconds / elapsed)
        n *= 8
    return n


@case
def scalar_arguments_release_the_gil(k: Any, src: Any) -> None:
    """Kernels whose work is not in their arguments' sizes (scalar arguments, a runtime
    loop, large temporaries) still let other threads run meanwhile."""
    def count(ticks: list[int], stop: threading.Event) -> None:
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    for kernel in (k.long_scalar_loop, k.big_work):
        run = functools.partial(kernel, _lasting(kernel, 0.2))
        ticks: list[int] = []
        stop = threading.Event()
        thread = threading.Thread(target=count, args=(ticks, stop))
        thread.start()
        try:
            started = time.monotonic()
            run()
            elapsed = time.monotonic() - started
        finally:
            stop.set()
            thread.join()
        # Had the kernel held the GIL, the other thread would not have run meanwhile.
        assert elapsed < 0.05 or len(ticks) >= 5, (elapsed, len(ticks))


# -- 8. random calls, compared with the uncompiled source ----------------------------------

#: Which kernels the fuzzer calls, and the kind of each parameter: "f64[:]", "f64[:, :]",
#: "bound" (any int64, a slice bound) or "size" (an array size; huge values must fail).
FUZZED: dict[str, tuple[str, ...]] = {
    "tail": ("f64[:]", "bound"), "head": ("f64[:]", "bound"),
    "window": ("f64[:]", "bound", "bound"), "backwards": ("f64[:]", "bound", "bound"),
    "set_tail": ("f64[:]", "bound"), "add_one": ("f64[:]",), "bump_first": ("f64[:]",),
    "add_into": ("f64[:]", "f64[:]"), "total": ("f64[:]",), "twice": ("f64[:, :]",),
    "scale_rows": ("f64[:, :]",), "grid": ("size", "size"), "tile_n": ("f64[:]", "size"),
    "repeat_n": ("f64[:]", "size"), "zeros_plus": ("size",), "cum_ones": ("size",),
}
#: Exceptions that count as the same answer (NumPy may run out of memory where aotc
#: proves the size too big first, or the other way round).
SAME_ERRORS = [{ValueError, MemoryError}, {IndexError}, {TypeError}]
FUZZ_STATS: dict[str, int] = {}


def _recipe(rng: np.random.Generator, kind: str) -> Any:
    """How to make one argument: deterministic, so the two runs get equal arguments."""
    if kind == "bound":
        return int(rng.choice([rng.integers(-9, 10), -2**63, 2**63 - 1, -10**12, 10**12]))
    if kind == "size":
        return int(rng.integers(-3, 13)) if rng.random() < 0.85 else int(
            rng.choice([2**62, 2**63 - 1, -2**63, -1]))
    ndim = 2 if kind == "f64[:, :]" else 1
    shape = tuple(int(rng.choice([0, 1, 2, 3, 5, 8])) for _ in range(ndim))
    values = rng.integers(-4, 5, size=shape).astype(np.float64)
    if values.size and rng.random() < 0.3:
        values.flat[int(rng.integers(values.size))] = rng.choice([np.nan, np.inf, -0.0])
    layout = str(rng.choice(["contiguous", "reversed", "strided", "fortran", "swapped",
                             "unaligned", "record", "readonly", "transposed"]))
    return ("array", values, layout)


def _materialize(recipe: Any) -> Any:
    if not isinstance(recipe, tuple):
        return recipe
    _, values, layout = recipe
    if layout == "reversed":
        return np.array(values[::-1])[::-1]
    if layout == "strided":
        wide = np.zeros((values.shape[0] * 2,) + values.shape[1:])
        wide[::2] = values
        return wide[::2]
    if layout == "fortran":
        return np.asfortranarray(values)
    if layout == "transposed":
        return np.array(values.T).T
    if layout == "swapped":
        return values.astype(">f8")
    if layout == "unaligned":
        raw = np.frombuffer(bytearray(values.nbytes + 1), np.uint8)[1:]
        out = raw.view(np.float64).reshape(values.shape) if values.size else values.copy()
        out[...] = values
        return out
    if layout == "record":
        rec = np.zeros(values.shape, dtype=[("a", "f8"), ("b", "u1")])
        rec["a"] = values
        return rec["a"]
    if layout == "readonly":
        out = values.copy()
        out.flags.writeable = False
        return out
    return values.copy()


def _outcome(fn: Callable[..., Any], args: list[Any]) -> tuple[str, Any]:
    try:
        with np.errstate(all="ignore"):
            return "value", fn(*args)
    except Exception as err:
        return "error", type(err)


def _same_outcome(mine: tuple[str, Any], theirs: tuple[str, Any]) -> bool:
    if mine[0] != theirs[0]:
        return False
    if mine[0] == "error":
        return mine[1] is theirs[1] or any(
            mine[1] in group and theirs[1] in group for group in SAME_ERRORS)
    if mine[1] is None or theirs[1] is None:
        return mine[1] is theirs[1]
    try:
        same(mine[1], theirs[1])
    except AssertionError:
        return False
    return True


@case
def random_calls(k: Any, src: Any) -> None:
    calls = int(os.environ.get("AOTC_FUZZ_CALLS", "20000"))
    rng = np.random.default_rng(int(os.environ.get("AOTC_FUZZ_SEED", "20261130")))
    names = sorted(FUZZED)
    for n in range(calls):
        name = names[int(rng.integers(len(names)))]
        recipes = [_recipe(rng, kind) for kind in FUZZED[name]]
        if name == "add_into" and recipes[0][1].shape != recipes[1][1].shape:
            recipes[1] = ("array", recipes[0][1] + 1.0, recipes[1][2])
        mine_args = [_materialize(r) for r in recipes]
        their_args = [_materialize(r) for r in recipes]
        mine = _outcome(getattr(k, name), mine_args)
        if name == "repeat_n" and mine_args[0].size * abs(mine_args[1]) >= 2**61:
            # NumPy 2.4 itself segfaults here (its np.repeat overflows the result size);
            # the right answer is its "array is too big".
            theirs: tuple[str, Any] = ("error", ValueError)
        else:
            theirs = _outcome(getattr(src, name), their_args)
        FUZZ_STATS[mine[0]] = FUZZ_STATS.get(mine[0], 0) + 1
        where = f"call {n}: {name}{tuple(r if not isinstance(r, tuple) else r[2] for r in recipes)}"
        # aotc refuses a read-only destination before running, NumPy when it gets there.
        refused_first = mine == ("error", ValueError) and theirs[0] == "error" and any(
            isinstance(r, tuple) and r[2] == "readonly" for r in recipes)
        assert refused_first or _same_outcome(mine, theirs), \
            f"{where}: aotc {mine} vs NumPy {theirs}"
        for a, b in zip(mine_args, their_args, strict=True):
            if isinstance(a, np.ndarray):
                assert np.array_equal(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                      equal_nan=True), f"{where}: argument after the call"
    FUZZ_STATS["calls"] = calls


# -- the child process ------------------------------------------------------------------------

def main(names: list[str]) -> None:
    """Run the named cases in this process, one JSON line each (``start`` first, so the
    parent knows which case a crash interrupted)."""
    import importlib
    import importlib.util

    k = importlib.import_module("aotc_hostile.kernels")
    assert k.__file__ is not None and k.__file__.endswith(".so"), k.__file__
    spec = importlib.util.spec_from_file_location(
        "hostile_source", os.path.join(os.path.dirname(k.__file__), "kernels.py"))
    assert spec is not None and spec.loader is not None
    src = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(src)
    for name in names:
        print(json.dumps({"case": name, "status": "start"}), flush=True)
        try:
            CASES[name](k, src)
            result = {"case": name, "status": "pass", "stats": dict(FUZZ_STATS)}
        except BaseException:
            result = {"case": name, "status": "fail", "detail": traceback.format_exc()}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or list(CASES))
