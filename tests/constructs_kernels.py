"""Kernels written the way real-world numeric Python is: early returns, ``and``/``or``,
``raise``/``assert``, comprehensions, unpacking, ``zip``/``enumerate``, names reused
across scopes, helpers and other kernels, NumPy imported under other names.

``tests/test_python_constructs.py`` builds this module into an extension and checks
every kernel against this very source run as plain Python on NumPy.
"""

import bisect
import cmath
import collections
import heapq
import itertools
import math
import random
import time
from collections import namedtuple
from heapq import heappush

import numpy as N
import numpy as np
from numpy import sqrt, zeros

import aotc
from aotc import bool_, c64, c128, f32, f64, i64, u8

TWO_PI = 2 * np.pi
WEIGHTS = np.array([0.25, 0.5, 0.25])
GRID = np.arange(12.0).reshape(3, 4)


class ConvergenceError(RuntimeError):
    pass


# -- early return --------------------------------------------------------------------------

@aotc.export
def total_or_default(x: f64[:], default: f64[:]) -> f64[:]:
    if x.shape[0] == 0:
        return default
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return default + s


@aotc.export
def piecewise(v: f64) -> f64:
    if v < 0:
        return -v
    elif v < 1:
        return v * v
    return 2.0 * v


@aotc.export
def first_above(x: f64[:], t: f64) -> i64:
    for i in range(x.shape[0]):
        if x[i] > t:
            return i
    return -1


@aotc.export
def newton(a: f64, tol: f64) -> f64:
    g = a if a > 1 else 1.0
    for _ in range(100):
        nxt = 0.5 * (g + a / g)
        if abs(nxt - g) < tol:
            return nxt
        g = nxt
    raise ConvergenceError("no convergence in 100 steps")


# -- boolean logic ---------------------------------------------------------------------------

@aotc.export
def positive_prefix(x: f64[:]) -> i64:
    k = 0
    n = x.shape[0]
    while k < n and x[k] > 0:  # x[k] is only read where k < n, as in Python
        k += 1
    return k


@aotc.export
def inside(i: i64, n: i64) -> f64:
    return 1.0 if 0 <= i < n else -1.0


@aotc.export
def logic(a: f64, b: f64) -> bool_:
    return (a > 0 and b > 0) or not (a < b)


@aotc.export
def first_or_fill(x: f64[:], fill: f64) -> f64:
    return x[0] if x.shape[0] > 0 and x[0] == x[0] else fill


# -- raise and assert -------------------------------------------------------------------------

@aotc.export
def prefix_sum(x: f64[:], n: i64) -> f64:
    if n > x.shape[0]:
        raise ValueError("n must be <= len(x)")
    assert n >= 0, "n must be non-negative"
    return np.sum(x[:n])


@aotc.export
def checked_mean(x: f64[:, :]) -> f64:
    if x.shape[1] != 3:
        raise IndexError("expected 3 columns")
    return np.mean(x)


# -- comprehensions, literals, unpacking ----------------------------------------------------

@aotc.export
def row_norms(m: f64[:, :]) -> f64[:]:
    return np.array([sqrt(np.sum(r * r)) for r in m])


@aotc.export
def weighted_sum(x: f64[:], n: i64) -> f64:
    return sum(x[i] * i for i in range(n))


@aotc.export
def with_literals(d: f64[:], a: f64, b: f64):
    return np.concatenate(([1.0], d)), np.array([a, b, a + b]), np.array([[a, 0.0], [0.0, b]])


@aotc.export
def path_length(pos: f64[:, :]) -> f64:
    total = 0.0
    for i in range(1, pos.shape[0]):
        dx, dy = pos[i] - pos[i - 1]
        total += sqrt(dx * dx + dy * dy)
    return total


@aotc.export
def dot_by_zip(xs: f64[:], ys: f64[:]) -> f64:
    s = 0.0
    for a, b in zip(xs, ys):  # noqa: B905 - kernels mirror NumPy users
        s += a * b
    for i, v in enumerate(xs):
        s += i * v
    return s


@aotc.export
def doubled(a: f64[:, :]) -> f64[:, :]:
    out = zeros(a.shape)
    for idx in np.ndindex(a.shape):
        out[idx] = a[idx] * 2
    return out


# -- names and scopes --------------------------------------------------------------------------

@aotc.export
def reused_names(x: f64[:]) -> f64:
    for i in range(x.shape[0]):
        t = x[i]
        x[i] = t * 2
    t = 0.0
    for j in range(x.shape[0]):
        t += x[j]
    return t


@aotc.export
def aliases(x: f64[:]) -> f64:
    flags = zeros(3, dtype=bool)
    ints = N.ones(2, dtype="i8")
    small = np.full(2, 1.5, dtype=np.float32)
    return N.sum(flags) + np.sum(ints) + np.sum(small) + sqrt(TWO_PI) + np.sum(WEIGHTS) + \
        np.sum(x)


@aotc.export
def matmul_loops(m0: f64[:, :], m1: f64[:, :]) -> f64[:, :]:
    n = m0.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            r = 0
            for k in range(n):
                r += m0[i, k] * m1[k, j]
            out[i, j] = r
    return out


@aotc.export
def project(v: f64[:], z: f64 = 1.0) -> f64[:]:
    return v / z


@aotc.export("f8(f8[:], f8)", "f8(f8[:])")
def scaled_total(x, factor=2.0):
    return np.sum(x) * factor


def _smooth(x):
    out = x.copy()
    out[1:-1] = x[:-2] * WEIGHTS[0] + x[1:-1] * WEIGHTS[1] + x[2:] * WEIGHTS[2]
    return out


@aotc.export
def smooth_twice(x: f64[:]) -> f64[:]:
    return _smooth(_smooth(x))


@aotc.export
def calls_a_kernel(x: f64[:]) -> f64:
    return piecewise(x[0]) + total_or_default(x, x)[0]


@aotc.export
def same_shape_sum(a: f64[:], b: f64[:]) -> f64:
    if a.shape == b.shape:
        return np.sum(a + b)
    return 0.0


@aotc.export
def with_math(x: f64) -> f64:
    return math.pi * x


@aotc.export
def fill_through_view(n: i64, steps: i64) -> f64[:]:
    padded = np.zeros(n + 2)
    inner = padded[1:-1]
    inner[:] = 1.0
    for _ in range(steps):
        inner += 0.5 * (padded[:-2] + padded[2:])  # a write through a view, in a loop
    return padded


@aotc.export
def copy_in_loop(x: f64[:], steps: i64) -> f64[:]:
    buf = np.zeros(x.shape[0])
    for k in range(steps):
        np.copyto(buf, x * k)
    return buf


@aotc.export
def moving_sums(x: f64[:], k: i64) -> f64[:]:
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i:i + k].sum()  # a window whose bounds are loop values
    return out


@aotc.export
def solve(a: f64[:, :], b: f64[:]) -> f64[:]:
    """Gaussian elimination with partial pivoting, as in textbooks."""
    n = a.shape[0]
    m = a.copy()
    y = b.copy()
    for i in range(n):
        p = i + np.argmax(np.abs(m[i:, i]))
        row = m[i].copy()
        m[i] = m[p]
        m[p] = row
        y[i], y[p] = y[p], y[i]
        for j in range(i + 1, n):
            f = m[j, i] / m[i, i]
            m[j, i:] -= f * m[i, i:]
            y[j] -= f * y[i]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - m[i, i + 1:] @ x[i + 1:]) / m[i, i]
    return x


@aotc.export
def strided_windows(x: f64[:]) -> f64:
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i::-2].sum() * (i + 1) + x[-i:].sum()  # negative steps and bounds
        head = x[:i] * 2.0  # a temporary whose size is the loop index
        if i > 0:
            total += head.mean() + head[-1]
    return total


@aotc.export
def cumulative_rows(m: f64[:, :]) -> f64[:, :]:
    out = np.zeros_like(m)
    for i in range(m.shape[0]):
        out[i, :i + 1] = m[:i + 1].sum(axis=0)[:i + 1]  # writes of runtime length
    return out


@aotc.export
def swap_ends(x: f64[:]) -> f64[:]:
    y = x.copy()
    y[0], y[-1] = y[-1], y[0]  # scalars read before either write, as in NumPy
    first = y[0]
    y[0] = 100.0
    return y * first


# -- index arrays ------------------------------------------------------------------------------

@aotc.export
def gather_rows(m: f64[:, :], rows: i64[:], cols: i64[:]) -> tuple:
    return m[rows], m[:, cols], m[rows, cols], m[0, :, None][cols]


@aotc.export
def histogram_by_hand(bins: i64[:], n: i64) -> f64[:]:
    counts = np.zeros(n)
    for b in bins:
        counts[b] += 1.0
    again = np.zeros(n)
    again[bins] += 1.0  # repeated indices: the last write wins, as in NumPy
    return counts * 10 + again


@aotc.export
def scatter_rows(m: f64[:, :], rows: i64[:]) -> f64[:, :]:
    y = m.copy()
    y[rows, 1:] = -1.0
    y[:, [0, -1]] *= 2.0
    y[rows[::-1], 0] = m[rows, 0] + 0.5
    return y


@aotc.export
def loop_inside_branch(x: f64[:], t: f64, k: i64) -> f64[:]:
    s = x * 1.0
    if t > 0:
        for _ in range(k):
            s += 1.0  # s is read in the branch, and dead after it
        x = x + s
    return x


# -- arguments that share memory --------------------------------------------------------------

@aotc.export
def smooth_into(src: f64[:], dst: f64[:]) -> None:
    for i in range(1, src.shape[0] - 1):
        dst[i] = (src[i - 1] + src[i] + src[i + 1]) / 3.0  # Python sees dst's writes in src


@aotc.export
def add_into(x: f64[:], y: f64[:]) -> None:
    x += y  # elementwise: each y[i] is read before x[i] is written, with or without overlap


@aotc.export
def lapl_steps(inp: f64[:, :], out: f64[:, :], steps: i64) -> f64:
    """Pythran's ``lapl2d``: a stencil between two arrays it swaps, which callers pass
    as one array and its transpose (or one array twice): each trip then reads what the
    last wrote (the alias twins)."""
    n, m = inp.shape
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                out[i, j] = 0.25 * (inp[i - 1, j] + inp[i + 1, j] + inp[i, j - 1] + inp[i, j + 1])
        inp, out = out, inp
    return inp.sum()


@aotc.export
def stream_step(f1: f64[:, :], f2: f64[:, :]) -> f64:
    """Pythran's ``d2q9`` ``one_time_step(r, r)``: writes ``f2`` and reads ``f1`` after,
    a shifted neighbour that the writes have reached when the two are one array."""
    total = 0.0
    for i in range(f1.shape[0]):
        for j in range(f1.shape[1]):
            f2[i, j] = 0.5 * f1[i, (j + 1) % f1.shape[1]] + 1.0
            total += f1[i, j]
    return total


@aotc.export
def axpy_then_add(a: f64, x: f64[:], y: f64[:]) -> None:
    """Two statements whose reads of ``x`` CSE merged into one, before the write into
    ``y`` between them, so that ``k(a, x, x)`` passed the overlap check and read ``x``
    before the first write (a silent wrong answer): the order is found before CSE."""
    y += a * x
    y += a * x


# -- Python lists ------------------------------------------------------------------------------

@aotc.export
def relax_lists(n: i64, steps: i64) -> tuple:
    u = [[0] * n for _ in range(n)]  # lists of ints that come to hold floats
    u[0] = [1] * n
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                u[i][j] = (u[i + 1][j] + u[i - 1][j] + u[i][j + 1] + u[i][j - 1]) / 4
    counts = [0] * n
    counts[n // 2] += 2
    return np.array(u), np.array(counts), np.array(n * [1.5, 2.5])


@aotc.export
def phi0(x: f64) -> f64:
    x = abs(x)
    if x < 9.08e-5:
        return 10  # a Python int on one path, a float on the other: float, as Numba gives
    else:
        return -math.log(math.tanh(x / 2))


@aotc.export
def window_floor(idx: i64, radius: f64) -> f64:
    if radius > idx:
        return 0
    return idx - radius


def _is_prime(n):
    if n < 2:
        return False
    if n == 2:
        return True
    top = int(math.ceil(math.sqrt(n)))
    i = 2
    while i <= top:
        if n % i == 0:
            return False
        i += 1
    return True


@aotc.export
def sum_primes(n: i64) -> i64:
    return sum([x for x in range(2, n) if _is_prime(x)])  # a filtered comprehension


@aotc.export
def filtered_stats(x: f64[:], t: f64) -> tuple:
    big = [v * 2 for v in x if v > t]
    return (len(big), max(big), min(v for v in x if v < t), any(v > 3 for v in x if v > t),
            sum(r.sum() for r in [x, x * 2] if r[0] > t))


# -- boolean masks -----------------------------------------------------------------------------

@aotc.export
def periodic_wrap(dx: f64[:], box: f64) -> f64[:]:
    dx[dx > box / 2] = dx[dx > box / 2] - box  # the same mask, built twice
    dx[dx < -box / 2] += box
    return dx


@aotc.export
def unit_or_zero(x: f64[:], eps: f64) -> f64[:]:
    out = np.empty(shape=x.shape, dtype=x.dtype)
    small = np.abs(x) < eps
    out[small] = 0
    rest = np.logical_not(small)
    out[rest] = x[rest] / np.abs(x[rest])  # ufuncs on selections
    return out


@aotc.export
def descend(steps: i64) -> tuple:
    rate = 0.005
    r, theta = 10.0, 180.0
    for _ in range(100_000):  # every input a constant: still a loop, not folded at build
        energy = 50.0 * (r - 0.95) ** 2 + 50.0 * (theta - 104.5) ** 2
        g_r, g_theta = 100.0 * (r - 0.95), 100.0 * (theta - 104.5)
        if abs(g_r) > 0.001 / rate or abs(g_theta) > 0.01 / rate:
            r = r - rate * g_r
            theta = theta - rate * g_theta
    return energy, r * steps, theta


@aotc.export
def fit_line(x: f64[:], d: f64[:], mu: f64, epochs: i64) -> f64[:]:
    f = 2 / len(x)
    y = np.zeros(len(x))
    err = np.zeros(len(x))
    w = np.zeros(2)
    grad = np.empty(2)
    for _ in itertools.repeat(None, epochs):
        err[:] = d - y
        grad[:] = f * np.sum(err), f * (np.dot(err, x))
        w += mu * grad
        y = w[0] + w[1] * x
    return w


@aotc.export
def collatz_start(target: i64) -> i64:
    start = 1
    while True:  # left only by the return
        i = start
        steps = 0
        while True:
            if i == 1:
                break
            if i % 2 == 0:
                i = i // 2
            else:
                i = 3 * i + 1
            steps += 1
        if steps == target:
            return start
        start += 1


# -- shapes known at run time ------------------------------------------------------------------

@aotc.export
def as_matrix(x: f64[:], n: i64, m: i64) -> f64[:, :]:
    return x.reshape(n, m)  # checked when called, ValueError as NumPy


@aotc.export
def row_maxima(x: f64[:, :], m: i64) -> f64:
    y = x.reshape(-1, m)  # the -1 size known only at run time
    return y.sum(axis=1).max() + y.shape[0]


@aotc.export
def jacobi_swap(grid: f64[:, :], out: f64[:, :], steps: i64) -> None:
    n = grid.shape[0]
    h2 = (1.0 / n) ** 2
    for _ in range(steps):
        out[1:n - 1, 1:n - 1] = h2 * (grid[0:n - 2, 1:n - 1] + grid[1:n - 1, 0:n - 2]
                                      - 4.0 * grid[1:n - 1, 1:n - 1] + grid[2:n, 1:n - 1]
                                      + grid[1:n - 1, 2:n])
        grid, out = out, grid  # two arguments of their own symbolic sizes, swapped


# -- sizes that depend on the data -------------------------------------------------------------

@aotc.export
def positives(x: f64[:], t: f64) -> tuple:
    kept = x[x > t]
    return (kept, np.sum(x[x > t]), x[x > t].mean(), np.nonzero(x > t)[0],
            np.flatnonzero(x < t), kept * 2 + 1, len(kept), x[np.argmax(x):])


@aotc.export
def selections(m: i64[:, :]) -> tuple:
    rows = m[m[:, 0] > 2]
    hits = np.where(m > 5)
    return (rows, np.argwhere(m > 5), hits[0], hits[1],
            np.compress([True, False, True], m, axis=1), np.extract(m % 2 == 0, m))


@aotc.export
def trimmed(x: f64[:]) -> tuple:
    return np.trim_zeros(x), np.trim_zeros(x, "f"), np.trim_zeros(x, "b")


@aotc.export
def refill(x: f64[:], y: f64[:]) -> tuple:
    z = x.copy()
    z[z > 2] = y[:4]  # y's items in order into the selected places
    w = x.copy()
    w[w < 2] = x[x > 5]  # one item broadcasts, as in NumPy
    return z, w


@aotc.export
def subpixel(c: f64[:]) -> tuple:
    shift = np.float32((c[0] * c[1] - 2 * c[2]) / (4 * c[3] - c[1] ** 2))  # a scalar type
    return shift, np.int16(c[1] * 100), np.float64(shift) * 2


# -- lists that grow, and lists as arguments ---------------------------------------------------

@aotc.export
def black_scholes(price: f64[:], strike: f64[:], years: f64[:], rate: f64, vol: f64,
                  n: i64) -> tuple:
    calls = []
    puts = []
    for k in range(0, n):
        root = math.sqrt(years[k])
        d1 = (math.log(price[k] / strike[k]) + (rate + 0.5 * vol * vol) * years[k]) / (vol * root)
        calls.append(price[k] * d1)
        puts.append(strike[k] - d1)
    return calls, puts


@aotc.export
def doubled_positives(x: f64[:]) -> tuple:
    out = [0.0]
    for v in x:
        if v > 0:
            out.append(v * 2)  # appended on some iterations only
    out.append(-1.0)
    return out, len(out)


@aotc.export
def positives_until(x: f64[:], stop: f64) -> f64[:]:
    """A range loop that breaks and appends: its trip count bounds the list."""
    out = []
    for i in range(x.shape[0]):
        if x[i] > stop:
            break
        if x[i] > 0:
            out.append(x[i])
    return np.array(out)


@aotc.export
def halves_until(x: i64[:]) -> f64[:]:
    """The same over a build-time range (still a runtime loop: appends depend on x)."""
    out = []
    for i in range(0, 40, 3):
        if x[i % x.shape[0]] > 5:
            break
        out.append(x[i % x.shape[0]] * 0.5)
    return np.array(out)


@aotc.export
def run_lengths(x: i64[:]) -> tuple[i64[:], i64[:]]:
    """Two arrays of different sizes on two return paths, as a tuple."""
    n = x.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    values = np.empty(n, dtype=np.int64)
    lengths = np.empty(n, dtype=np.int64)
    k = 0
    start = 0
    for i in range(1, n + 1):
        if i == n or x[i] != x[start]:
            values[k] = x[start]
            lengths[k] = i - start
            k += 1
            start = i
    return values[:k], lengths[:k]


@aotc.export
def run_length_decode(values: i64[:], lengths: i64[:], m: f64[:, :]) -> tuple:
    """np.repeat with a count per element: the counts an argument (the length a size
    computed before the kernel runs), or build-time; along an axis; one count for all."""
    return (np.repeat(values, lengths), np.repeat(m, [1, 0, 2, 1], axis=1),
            np.repeat(m, [2], axis=0),
            np.sum(np.repeat(values * 0.5, lengths)))


@aotc.export
def histogram_of(x: f64[:], w: f64[:], nbins: i64) -> tuple:
    """A number of bins given at run time: the output's size is known when it starts."""
    return np.histogram(x, nbins), np.histogram(x, nbins, range=(0.0, 1.0), weights=w)


@aotc.export
def drop_first_point(pts: f64[:, 2]) -> f64[:, 2]:
    """Paths of different row counts keep the columns every path has (2)."""
    if pts.shape[0] < 3:
        return pts
    return pts[1:]


@aotc.export
def dot_rows(a: f64[:, 2], b: f64[:, 2]) -> f64[:, :]:
    table = []
    for t1, p1 in a:
        table.append([t1 * t2 + p1 * p2 for t2, p2 in b])
    return np.array(table)


# -- sorting and what is built on it -------------------------------------------------------

@aotc.export
def order_statistics(x: f64[:], m: i64[:, :]) -> tuple:
    s = np.sort(x)
    values, inverse, counts = np.unique(m, return_inverse=True, return_counts=True)
    return (s, np.argsort(x, kind="stable"), np.median(x), np.percentile(x, [25, 75]),
            np.sort(m, axis=0), values, inverse, counts, np.searchsorted(s, 0.0),
            np.partition(m, 1, axis=1)[:, 1])


@aotc.export
def sort_rows_in_place(m: f64[:, :]) -> None:
    m.sort()


# -- returning an argument ----------------------------------------------------------------------

@aotc.export
def triad_into(a: f64[:], b: f64[:], c: f64[:], s: f64) -> f64[:]:
    a[:] = b + s * c
    return a  # the caller's own array, as the uncompiled function returns


@aotc.export
def same_array(a: f64[:]) -> tuple:
    return a, a.sum()


# -- variables and results that may be None ---------------------------------------------------

@aotc.export
def first_index_above(x: f64[:], t: f64):
    for i in range(x.shape[0]):
        if x[i] > t:
            return i
    return None


@aotc.export
def circumcenter(ax: f64, ay: f64, bx: f64, by: f64):
    d = ax * by - ay * bx
    if d == 0.0:
        return None
    return (ax / d, by / d)


@aotc.export
def smallest_above(x: f64[:], t: f64) -> f64:
    best = None
    for v in x:
        if v > t and (best is None or v < best):
            best = v
    if best is None:
        return -1.0
    return best * 2.0


@aotc.export
def axpy_unless_empty(n: i64, a: f64, x: f64[:], y: f64[:]):
    if n <= 0:
        return
    for i in range(n):
        y[i] = y[i] + a * x[i]
    return y


@aotc.export
def classify_sides(pts: f64[:, :]) -> tuple:
    left = None
    right = None
    for p in pts:
        c = None if p[0] == 0.0 else (p[0], p[1])
        if c is None:
            continue
        if p[0] > 0.0 and (left is None or c[1] > left[1]):
            left = c
        elif p[0] < 0.0 and (right is None or c[1] < right[1]):
            right = c
    if left is None and right is None:
        return (0.0, 0.0)
    if left is None:
        return right
    return left


@aotc.export
def none_times_two(x: f64[:], t: f64) -> f64:
    best = None
    for v in x:
        if v > t:
            best = v
    return best * 2.0


# -- lookup tables and splits ---------------------------------------------------------------

@aotc.export
def lookup_table(x: f64[:], k: i64) -> tuple:
    w = [0.5, 2.0, -1.0]
    s = 0.0
    for i in range(x.shape[0]):
        s += w[i % 3] * x[i]
    return s, (1.0, 2.0)[k]


@aotc.export
def bin_sums(x: f64[:], n: i64) -> f64[:]:
    parts = np.array_split(x, n)
    out = np.zeros(n)
    for i in range(len(parts)):
        out[i] = parts[i].sum() + parts[i].shape[0] * 100.0
    return out


@aotc.export
def split_pieces(x: f64[:], m: f64[:, :]) -> tuple:
    a, b = np.array_split(x, 2)
    c = np.split(x[:4], [1, 3])
    top, bottom = np.vsplit(m, 2)
    return a.sum(), b, c[0], c[1], c[2], top, bottom, np.hsplit(m, 3)[2]


# -- branches that give arrays of different sizes ----------------------------------------------

@aotc.export
def unless_same_length(data: f64[:, :], n: i64):
    if n == data.shape[0]:
        return data
    out = np.zeros((n, data.shape[1]))
    out[0] = data[0]
    return out


@aotc.export
def trimmed_or_doubled(x: f64[:], k: i64) -> tuple:
    if k > 0:
        y = x[k:]
    else:
        y = np.concatenate((x, x))
    return y, y.sum() + y.shape[0]


# -- sizes computed from scalar arguments ------------------------------------------------------

@aotc.export
def sampled(a: f64, b: f64, n: f64, t: f64, dt: f64, k: i64) -> tuple:
    return np.linspace(a, b, int(n)), np.arange(0.0, t, dt), np.arange(0, k, k // 3 + 1)


@aotc.export
def time_grid(t: f64, dt: f64) -> f64[:]:
    steps = int(t / dt) + 1
    out = np.zeros(steps)
    for i in range(steps):
        out[i] = i * dt
    return out


# -- runtime values in exception messages ----------------------------------------------------

@aotc.export
def checked_window(x: f64[:], n: i64, limit: f64) -> f64:
    if n > x.shape[0]:
        raise ValueError(f"n={n} is larger than len(x)={x.shape[0]}")
    m = x[:n].max() if n > 0 else 0.0
    if m > limit:
        raise ValueError(f"max {m:.2f} exceeds {limit}; ok is {m <= limit}")
    assert m >= 0, f"negative max {m!r:>8}"
    return m


# -- private names, as SciPy's Pythran kernels have them ----------------------------------------

@aotc.export("f8(f8[:, :], i8, i8)")
def _Aij(A, i, j):
    """The sum of A over the blocks above-left and below-right of (i, j)."""
    return A[:i, :j].sum() + A[i + 1:, j + 1:].sum()


@aotc.export
def _private_scale(x: f64[:], a: f64) -> f64[:]:
    return _helper(x) * a


def _helper(x):
    return x + 1.0


# -- Python scalars in signature strings are weak, as their annotations are ----------------

@aotc.export("f4[:](f4[:], float, int)", "f8[:](f8[:], float, int)")
def weak_string_scalars(x, a, k):
    return (x - k) * a  # float32 stays float32, as in NumPy


@aotc.export
def weak_or_numpy_scalars(x: f32[:], a: float, z: c64[:], w: complex) -> tuple:
    """A Python number is weak (float32 stays float32); a NumPy float64 or complex128 is
    not (aotc.packaging.weak_scalars: twins compiled for each combination)."""
    return x * a, z * w


@aotc.export
def empty_constructors(x: f64[:]) -> tuple:
    """Builtin constructors with no arguments: list() grown in a runtime loop."""
    out = list()
    for i in range(x.shape[0]):
        if x[i] > 0:
            out.append(x[i] * 2.0)
    return out, float() + int() + bool() + complex().real + len(tuple()) + len(list())  # noqa: UP018, C408


@aotc.export
def operators_on_selections(r: f64, z: c128[:], x: f64[:]) -> tuple:
    """A scalar on the left of a selection x[mask]: the selection's own operator."""
    return r / np.abs(z[np.abs(z) > 1]), r - x[x > 0], 2.0 ** x[x < 1], r < x[x > 0]


@aotc.export
def flat_and_selected_items(a: f64[:, :], x: f64[:]) -> tuple:
    """for v in a.flat (C order: the running value depends on it) and for v in x[m]."""
    s = 0.0
    for v in a.flat:
        s = s * 0.5 + v
    t = 0.0
    for v in x[x > 0]:
        t = t * 0.5 + v
    return s, t, a.flat[1]


# -- guards: a raise, assert or return runs before the checks of the code after it ----------
# (every position: first, after a raise on values, in a loop, after a write, as a return;
# every kind of message: none, constant, f-string, %-format, str.format)

@aotc.export
def guard_fstring(x: f64[:]) -> f64:
    if x.shape[0] == 0:
        raise ValueError(f"empty: {x.shape[0]}")
    return x[0]


@aotc.export
def guard_assert_fstring(x: f64[:]) -> f64:
    assert x.shape[0] > 1, f"need two, got {x.shape[0]!r}"
    return x[1]


@aotc.export
def guard_percent(x: f64[:], k: i64) -> f64:
    if x.shape[0] < k:
        raise ValueError("need %d points, got %-3d|%05.1f%%" % (k, x.shape[0],  # noqa: UP031
                                                               100.0 * x.shape[0] / k))
    return x[k - 1]


@aotc.export
def guard_after_values(x: f64[:]) -> f64:
    if x[0] < 0:
        raise ValueError("negative first: %r" % x[0])  # noqa: UP031
    if x.shape[0] < 3:
        raise ValueError("need three")
    return x[2]


@aotc.export
def guard_in_loop(x: f64[:], n: i64) -> f64:
    for i in range(n):
        if i > 1:
            raise ValueError(f"stopped at {i}")
    return x[3]


@aotc.export
def guard_str_format(x: f64[:, :]) -> f64:
    if x.shape[1] != 3:
        raise IndexError("expected 3 columns, got {}".format(x.shape[1]))  # noqa: UP032
    return x[0, 2]


@aotc.export
def guard_after_write(x: f64[:]) -> f64:
    x[0] = 1.0
    if x.shape[0] < 4:
        raise ValueError
    return x[3]


@aotc.export
def guard_early_return(x: f64[:]) -> f64:
    if x.shape[0] == 0:
        return -1.0
    return x[0] + x[x.shape[0] - 1]


@aotc.export
def search_else(x: f64[:]) -> tuple:
    for i in range(x.shape[0]):
        if x[i] < 0:
            found = i
            break
    else:
        found = -1
    q, r = divmod(found, 3)
    q2, r2 = np.divmod(x, 2.0)
    return found, q, r, q2, r2


# -- variables assigned on some paths only -----------------------------------------------------

@aotc.export
def one_sided(x: f64[:], flag: bool_) -> f64:
    if flag:
        scale = x.max()
    total = x.sum()
    if flag:
        total = total / scale
    return total


@aotc.export
def read_unbound(x: f64[:], t: f64) -> f64:
    if x.shape[0] > 2:
        y = x[0] * t
    return y


# -- Python lists written at runtime indices --------------------------------------------------

@aotc.export
def list_tables(x: f64[:], n: i64) -> tuple:
    e = [1.0, -1.0, -1.0, -1.0]
    for _ in range(n):
        e[0] = (e[0] + e[1]) * 0.5  # an outer list written in a runtime loop
    best = [0.0] * 5
    for i in range(x.shape[0]):
        k = i % 5
        best[k] = max(best[k], x[i])
    counts = [0, 0, 0]
    for v in x:
        if v > 0:
            counts[int(v) % 3] += 1
    return e[0], e[1], best[0], best[4], counts[0], counts[1], counts[2]


@aotc.export
def list_operators(n: i64) -> tuple:
    a = [0.5] * n
    b = a + [1.0, 2.0]
    return np.array(b), len(b), np.array(a * 2)


@aotc.export
def dict_state(n: i64) -> f64:
    d = {"a": 1.0, "b": 2.0}
    for _ in range(n):
        d["a"] = d["a"] * 0.5 + d["b"]
    return d["a"]


# -- sizes computed from array contents -----------------------------------------------------------

@aotc.export
def counts_from_data(x: i64[:], w: f64[:]) -> tuple:
    return (np.bincount(x), np.bincount(x, w), np.bincount(x, minlength=8),
            np.zeros(int(w.max()) + 1))


@aotc.export
def steps_of(t: f64, dt: f64) -> f64[:]:
    return np.zeros(int(t / dt) + 1)


@aotc.export
def ranked(x: f64[:]) -> tuple:
    table = sorted([3.0, x[0], 1.0])
    return table[0], table[2], sorted(x, reverse=True)[0], sorted([2, 1])[0]


# -- results of nested tuples, lists and dicts ---------------------------------------------------

@aotc.export
def structured_results(x: f64[:]):
    stats = [x.min(), x.max()]
    return {"total": x.sum(), "range": (stats[0], stats[1])}, [x * 2.0, x.shape[0]], (x[0],)


# -- a while loop whose test reads a flag the body sets before reading it -------------------------

@aotc.export
def bubble_sorted(x: f64[:]) -> f64[:]:
    a = x.copy()
    swapped = True
    while swapped:
        swapped = False
        for i in range(len(a) - 1):
            if a[i] > a[i + 1]:
                a[i], a[i + 1] = a[i + 1], a[i]
                swapped = True
    return a


# -- sizes from values that are 1 at run time stretch, as NumPy broadcasts them --------------------

@aotc.export
def floyd_warshall(d: f64[:, :]) -> f64[:, :]:
    d = d.copy()
    for k in range(d.shape[0]):
        d = np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :])
    return d


@aotc.export
def window_times(x: f64[:], y: f64[:], a: i64, b: i64) -> tuple:
    out = y.copy()
    out[:] = x[a:b]  # one element stretches over out; else the sizes must agree
    return x[a:b] * y, out


@aotc.export
def three_windows(x: f64[:], y: f64[:], z: f64[:], a: i64, b: i64, c: i64, d: i64) -> f64[:]:
    return np.where(x[a:b] > 0, y[c:d], z)  # each window checked against z's size


# -- sizes of arguments that are 1 at run time stretch too (the broadcast twin) -----------------

@aotc.export
def plus(x: f64[:, :], y: f64[:, :]) -> f64[:, :]:
    return x + y


@aotc.export
def times_first_column(x: f64[:, :]) -> f64[:, :]:
    return x * x[:, :1]


@aotc.export
def scaled_rows_into(x: f64[:, :], w: f64[:]) -> f64[:, :]:
    out = np.empty_like(x)
    out[:] = x * w  # w may be 1 long; out's own sizes never stretch
    return out


@aotc.export
def chosen(c: bool_[:], x: f64[:], y: f64[:]) -> f64[:]:
    return np.where(c, x, y)


@aotc.export
def sums_beside_broadcast(x: f64[:], y: f64[:]) -> tuple:
    return (x + y).sum(), y.sum(), len(y)  # y itself keeps its size


@aotc.export
def broadcast_in_loop(x: f64[:], y: f64[:], n: i64) -> f64[:]:
    acc = np.zeros_like(x)
    for _ in range(n):
        acc += x * y
    return acc


@aotc.export
def guard_then_broadcast(x: f64[:], y: f64[:]) -> f64[:]:
    if x.shape[0] == 0:
        raise ValueError(f"empty: {x.shape[0]}")
    return x - y


@aotc.export
def rows_of(x: f64[:], n: i64) -> f64[:, :]:
    return np.broadcast_to(x, (n, 3)) * 2.0


@aotc.export
def cube_products(a: f64[:, :, :], b: f64[:, :, :]) -> f64[:, :, :]:
    return a * b + 1.0


# -- builtins over runtime items: sorted(key=...), min/max/any/all of lists ---------------------

@aotc.export
def ranked_by(x: f64[:]) -> tuple:
    order = sorted(range(len(x)), key=lambda i: x[i])
    down = sorted(range(len(x)), key=lambda i: x[i], reverse=True)
    few = sorted([0, 1, 2], key=lambda i: -x[i])
    return order, down, few, sorted(x, reverse=True)


@aotc.export
def extremes_of_lists(x: f64[:]) -> tuple:
    vals = [x[0], x[-1], 3.0]
    return min(vals), max(vals), any([x[0] > 2.0, x[1] > 2.0]), all((x[0] > 0.0, x[-1] > 0.0))


# -- strings chosen at run time ------------------------------------------------------------------

@aotc.export
def grade(n: i64) -> tuple:
    if n >= 90:
        g = "A"
    elif n >= 80:
        g = "B"
    else:
        g = "F"
    return g, g == "A", g != "B", ("pass" if g != "F" else "fail", n)


@aotc.export
def sign_word(x: f64[:]) -> str:
    if x.shape[0] == 0:
        return "empty"
    if x.sum() > 0:
        return "positive"
    return "non-positive"


# -- a loop state whose sizes are written otherwise: checked equal at run time -------------

@aotc.export("(f32[:, :], i64)")
def gated_scan(conv, s):  # Pythran's convnet: slices by a size the caller passes
    state = np.zeros((conv.shape[0], s), dtype=np.float32)
    out = np.zeros((conv.shape[0], s), dtype=np.float32)
    for _ in range(3):
        z = conv[:, :s]
        f = conv[:, s:2 * s]
        state = f * state + (1 - f) * z
        out += state
    return out


@aotc.export("(f64[:], i64[:, 2])")
def summed_spans(x, start_stop_pairs):  # SciPy's Pythran "(int, int) list": rows
    total = 0.0
    for start, stop in start_stop_pairs:
        for j in range(start, stop):
            total += x[j]
    return total


# -- str parameters that select: compiled once per string the module compares ------------

def _linear_rbf(r):
    return -r


def _cubic_rbf(r):
    return r**3


_NAME_TO_RBF = {"linear": _linear_rbf, "cubic": _cubic_rbf}


@aotc.export("(f64[:], str)", "(f32[:], str)")
def named_kernel(x, kernel):
    f = _NAME_TO_RBF[kernel]
    return np.array([f(v) for v in x])


@aotc.export
def chosen_method(y: f64[:], method: str, scale: float = 1.0) -> f64:
    if method == "separate":
        return np.median(y) * scale
    elif method not in ("hierarchical",):
        raise ValueError(f"method must be 'hierarchical' or 'separate', got {method!r}")
    return np.mean(y) * scale


# -- strings formatted from runtime values: made by the caller when the kernel returns -------

@aotc.export
def leading_digits(v: i64) -> str:
    t = (371072875339021027, 463769376774900097, 743249861995247410)
    return str(sum(t) + v)[0:10]


@aotc.export
def summary_line(x: f64[:], k: i64) -> tuple[str, str, str, str]:
    m = x.mean() if x.shape[0] else 0.0
    head = f"mean={m:.3f} n={len(x)} k={k!r:>4}|"
    old = "%d items, %5.1f%%" % (k, 100.0 * m)  # noqa: UP031
    return head.upper(), old, "{}-{}".format(k, k + 1), repr(float(m)) + "/" + str(k) * 2  # noqa: UP032


@aotc.export
def formatted_message(n: i64) -> str:
    text = "n is " + str(n)
    if n < 0:
        raise ValueError(text + "!")
    if n > 1000:  # a string made before, formatted into the message
        raise ValueError(f"too big: {text!r}|%s" % text)
    return text.zfill(12) + "{k}|{w:>3}".format(k=n, w="x")


# -- generators with runtime bounds: all/any stop where Python's do; reduce is a loop ------

def _is_prime(n):
    return all((n % j > 0) for j in range(2, n))


@aotc.export("(i64,)")
def sexy_prime_pairs(x):
    return [[j - 6, j] for j in range(9, x + 1) if _is_prime(j) and _is_prime(j - 6)]


@aotc.export("(f64[:], i64)")
def decided_early(x, n):
    # Python never reads x[i] past the first item that decides: no IndexError there
    return (any(x[i] > 2 for i in range(n)), all(x[i] > 0 for i in range(n) if i % 2 == 1),
            any(v < -1 for v in x[::-1]))


def _pair_sum(i, j):
    return i + j


@aotc.export("(i64, f64[:])")
def mapped_rows(size, x):
    out = list()
    for i in range(size):
        out.append(list(map(lambda j: _pair_sum(i, j), range(size))))
    return out, sum(map(abs, x)), list(map(lambda a, b: a * b, x, x[::-1])), \
        all(map(lambda v: v > -5, x))


@aotc.export("(f64[:],)")
def folded(x):
    from functools import reduce
    total = reduce(lambda a, b: a + b * b, x, 0.0)
    best = reduce(lambda a, b: a if a[1] >= b[1] else b, zip(range(len(x)), x))  # noqa: B905
    return total, best


# -- transforms called inside kernels: inlined, as jax.grad inside jax.jit ---------------------

@aotc.export
def cubic_energy(x: f64[:]) -> f64:
    return np.sum(x**3) / 3.0


@aotc.export
def gradient_step(x: f64[:], lr: f64) -> f64[:]:
    return x - lr * aotc.grad(cubic_energy)(x)


@aotc.export
def row_norm(r: f64[:]) -> f64:
    return np.sqrt(np.sum(r * r))


@aotc.export
def all_row_norms(m: f64[:, :]) -> f64[:]:
    return aotc.vmap(row_norm)(m) * 2.0


@aotc.export
def first_over(x: f64[:], t: f64) -> f64:
    for i in range(x.shape[0]):
        if x[i] > t:
            return x[i]  # an early return in a loop: not batchable, so vmap loops over lanes
    return -1.0


first_over_each = aotc.export(aotc.vmap(first_over, in_axes=(0, None)), name="first_over_each")


# -- Python's random.sample: CPython's draws, from its pool or its set --------------------------

@aotc.export
def sampled_indices(n: i64, k: i64, seed: i64) -> list:
    random.seed(seed)
    return random.sample(range(n), k)


@aotc.export
def sampled_values(x: f64[:], k: i64, seed: i64) -> tuple:
    random.seed(seed)
    picks = random.sample([x[0], x[1], x[2], x[3]], k)
    return picks, random.random()  # the generator goes on from where sample left it


# -- clocks read where the kernel runs ---------------------------------------------------------

@aotc.export
def timed_sum(x: f64[:]) -> tuple:
    start = time.time()
    total = 0.0
    for v in x:
        total += v
    elapsed = time.perf_counter() - time.perf_counter()
    return total, time.time() - start >= 0.0, elapsed <= 0.0, start


# -- lists of different lengths on two paths: joined, as Python's paths are ---------------------

@aotc.export
def divisors_or_self(n: i64) -> list:
    if n == 2:
        return [2]
    return [1, n, n * n]


@aotc.export
def ragged_then_used(n: i64, x: f64) -> tuple:
    if n > 3:
        v = [x, 2 * x]
    else:
        v = [x, x, x]
    w = v + [0.5]  # still a list: + concatenates
    return len(v), sum(w), w[-1]


# -- recursion on runtime values: each recursive function compiled once, called for real -------

def _fib(n):
    if n < 2:
        return n
    return _fib(n - 1) + _fib(n - 2)


def _ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return _ackermann(m - 1, 1)
    return _ackermann(m - 1, _ackermann(m, n - 1))


def _is_even(n):
    return True if n == 0 else _is_odd(n - 1)


def _is_odd(n):
    return False if n == 0 else _is_even(n - 1)


def _collatz_steps(n, steps):
    if n == 1:
        return steps
    if n % 2 == 0:
        return _collatz_steps(n // 2, steps + 1)
    return _collatz_steps(3 * n + 1, steps + 1)


def _factorial(n):
    if n < 0:
        raise ValueError(f"factorial of a negative number: {n}")
    return 1 if n == 0 else n * _factorial(n - 1)


def _depth(n):
    return 0.0 if n <= 0 else 0.5 + _depth(n - 1)


def _power_sum(x, k):  # a depth known at build time: inlined
    return 0.0 if k == 0 else x**k + _power_sum(x, k - 1)


@aotc.export
def fib(n: i64) -> i64:
    return _fib(n)


@aotc.export
def ackermann(m: i64, n: i64) -> i64:
    return _ackermann(m, n)


@aotc.export
def parity(n: i64) -> tuple:
    return _is_even(n), _is_odd(n)


@aotc.export
def collatz(n: i64) -> i64:
    return _collatz_steps(n, 0)


@aotc.export
def factorial(n: i64) -> i64:
    return _factorial(n)


@aotc.export
def halves(n: i64) -> f64:
    return _depth(n)


@aotc.export
def fibs_of(x: i64[:]) -> i64[:]:
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = _fib(x[i])
    return out


@aotc.export
def power_sum(x: f64) -> f64:
    return _power_sum(x, 4)


def _partition(a, start, end):  # Pythran's quicksort test kernel, as written there
    pivot = a[end]
    bottom = start - 1
    top = end
    done = 0
    while not done:
        while not done:
            bottom = bottom + 1
            if bottom == top:
                done = 1
                break
            if a[bottom] > pivot:
                a[top] = a[bottom]
                break
        while not done:
            top = top - 1
            if top == bottom:
                done = 1
                break
            if a[top] < pivot:
                a[bottom] = a[top]
                break
    a[top] = pivot
    return top


def _quicksort(a, start, end):  # an array by reference, written in place; returns None
    if start < end:
        split = _partition(a, start, end)
        _quicksort(a, start, split - 1)
        _quicksort(a, split + 1, end)


def _halving_sum(x):  # views of runtime sizes, read only
    n = x.shape[0]
    if n <= 1:
        return x.sum()
    return _halving_sum(x[:n // 2]) + _halving_sum(x[n // 2:])


def _fill(grid, i, j):  # a flood fill: a 2-D array written, a count returned
    if i < 0 or j < 0 or i >= grid.shape[0] or j >= grid.shape[1] or grid[i, j] != 0:
        return 0
    grid[i, j] = 2
    return 1 + _fill(grid, i + 1, j) + _fill(grid, i - 1, j) + _fill(grid, i, j + 1) \
        + _fill(grid, i, j - 1)


def _queens(row, cols, n):  # backtracking with the placements in an array
    if row == n:
        return 1
    count = 0
    for c in range(n):
        ok = True
        for r in range(row):
            if cols[r] == c or abs(cols[r] - c) == row - r:
                ok = False
        if ok:
            cols[row] = c
            count += _queens(row + 1, cols, n)
    return count


def _mergesort_inplace(arr):  # numba's examples/mergesort.py: views, returns its argument
    if arr.size > 2:
        mid = arr.size // 2
        first = arr[:mid]
        second = arr[mid:]
        _mergesort_inplace(first)
        _mergesort_inplace(second)
        left = 0
        right = mid
        while left < mid and right < arr.size:
            if arr[left] <= arr[right]:
                left += 1
            else:
                temp = arr[right]
                right += 1
                for i in range(mid, left, -1):
                    arr[i] = arr[i - 1]
                arr[left] = temp
                left += 1
                mid += 1
    elif arr.size == 2:
        a, b = arr
        arr[0], arr[1] = ((a, b) if a <= b else (b, a))
    return arr


def _mergesort(arr):  # the same file's out-of-place one: sorts copies, uses what they return
    if arr.size > 2:
        mid = arr.size // 2
        first = _mergesort(arr[:mid].copy())
        second = _mergesort(arr[mid:].copy())
        left = right = 0
        writeidx = 0
        while left < first.size and right < second.size:
            if first[left] <= second[right]:
                arr[writeidx] = first[left]
                left += 1
            else:
                arr[writeidx] = second[right]
                right += 1
            writeidx += 1
        while left < first.size:
            arr[writeidx] = first[left]
            writeidx += 1
            left += 1
        while right < second.size:
            arr[writeidx] = second[right]
            writeidx += 1
            right += 1
    elif arr.size == 2:
        a, b = arr
        arr[0], arr[1] = ((a, b) if a <= b else (b, a))
    return arr


def _extremes(x, lo, hi):  # a tuple of runtime values from each call
    if hi - lo <= 1:
        return x[lo], x[lo], lo
    mid = (lo + hi) // 2
    a, b, i = _extremes(x, lo, mid)
    c, d, j = _extremes(x, mid, hi)
    return min(a, c), max(b, d), (i if b >= d else j)


@aotc.export
def quicksorted(a: i64[:], start: i64, end: i64) -> None:
    _quicksort(a, start, end)


@aotc.export
def halving_total(x: f64[:]) -> f64:
    return _halving_sum(x)


@aotc.export
def filled_from(grid: i64[:, :], i: i64, j: i64) -> i64:
    return _fill(grid, i, j)


@aotc.export
def queens(n: i64) -> i64:
    return _queens(0, np.zeros(n, np.int64), n)


def _keep_if_positive(out, v):  # appends to the caller's list under a runtime condition
    if v > 0:
        out.append(v)


@aotc.export
def kept_by_a_helper(x: f64[:]) -> tuple:
    out = []
    for i in range(x.shape[0]):
        _keep_if_positive(out, x[i])
        _keep_if_positive(out, -2.0 * x[i])
    _keep_if_positive(out, 7.0)
    return len(out), np.array(out)


def _kept_count(out, v):  # appends under a runtime condition, returns the count
    if v > 0:
        out.append(v)
    return len(out)


def _one_more(out, v):  # the same call inside its return value
    return 1 + _kept_count(out, v)


@aotc.export
def kept_inside_expressions(x: f64[:]) -> tuple:
    """Helpers changing the caller's list, called inside expressions: taken out of them
    in Python's order (an augmented assignment's value, after NumPy's and builtins'
    calls, in a helper's return, in another such call's argument)."""
    out = []
    total = 0.0
    for i in range(x.shape[0]):
        total += 2 * _kept_count(out, x[i])
        total = total + np.sqrt(abs(x[i])) + _one_more(out, -x[i])
        _kept_count(out, _kept_count(out, x[i] - 1.0) * 0.5)
    return total, len(out), sum(out, 0.0)  # (not the list: a box, its handle a counter's)


@aotc.export
def chosen_by_python_rules(x: f64[:]) -> tuple:
    """max/min with key= over a runtime range, max/min of tuples (field by field, not
    each field's own), sorted() of a filtered comprehension, and dict and set
    comprehensions over runtime items."""
    best = max(range(x.shape[0]), key=lambda i: x[i])
    nearest = min(range(x.shape[0]), key=lambda i: abs(x[i] - 0.5))
    among = (max(range(3), key=lambda i: x[i]), min([0, 2], key=lambda i: abs(x[i])))
    pts = [(np.floor(x[i] * 2), x[i]) for i in range(x.shape[0])]
    top, low = max(pts), min(pts)
    kept = sorted([v for v in x if v > 0], reverse=True)
    doubled = {i: x[i] * 2 for i in range(x.shape[0])}
    thirds = {int(v * 3) for v in x}
    return (best, nearest, among, top[0], top[1], low[1], np.array(kept), doubled[0],
            len(doubled), len(thirds))


@aotc.export
def kinds_of_scalars(n: i64, v: f64) -> tuple:
    """isinstance of a scalar argument: an int for a Python int, not for np.int64 (told
    at run time); a float for both a Python float and np.float64."""
    whole = 2 * n if isinstance(n, int) else -n
    return whole, isinstance(n, (int, np.integer)), isinstance(v, float), \
        isinstance(v, np.floating)


@aotc.export
def rounded_to_digits(v: f64) -> tuple:
    """round(v, n): a Python float to the decimal nearest its exact value (-3.55 -> -3.5),
    a NumPy scalar as np.round (-3.6)."""
    return round(v, 1), round(v, 2), round(v, -1), round(v, 0), round(v)


def _squares_upto(n):  # a generator: its items collected into a list
    for i in range(n):
        yield i * i + 0.0


def _above_then_squares(x, t):
    for v in x:
        if v > t:
            yield v
    yield from _squares_upto(3)


def _index_pairs(n):
    for i in range(n):
        for j in range(i):
            yield i, j


@aotc.export
def consumed_generators(x: f64[:], n: i64) -> tuple:
    """Generator helpers consumed by sum(), a for loop (unpacking pairs), list() and a
    comprehension."""
    total = 0
    for i, j in _index_pairs(n):
        total += i * j
    return (sum(_squares_upto(n), 0.0), total, np.array(list(_above_then_squares(x, 0.5))),
            np.array([2.0 * v for v in _above_then_squares(x, 0.0)]))


@aotc.export
def standard_library_orders(x: f64[:], n: i64) -> tuple:
    """Python's orders on runtime values: a list of tuples sorted field by field (with
    reverse= and key=), bisect on a sorted array, heapq.nsmallest/nlargest, and
    itertools.combinations and product over runtime ranges."""
    pairs = [(np.floor(v * 3), v) for v in x]
    down = sorted(pairs, reverse=True)
    pairs.sort()
    by_value = [(np.floor(v * 3), v) for v in x]
    by_value.sort(key=lambda p: p[1])
    ordered = np.sort(x)
    where = (bisect.bisect_left(ordered, 0.5), bisect.bisect_right(ordered, 0.5, 1),
             bisect.bisect(ordered, 2.0))
    pair_sum, product_sum = 0.0, 0
    for a, b in itertools.combinations(x, 2):
        pair_sum += a * b
    for i, j in itertools.product(range(n), range(3)):
        product_sum += i * j
    firsts = np.array([p[1] for p in pairs]) if len(pairs) else np.zeros(0)
    return (firsts, down[0][1] if len(down) else -1.0, by_value[-1][1] if len(by_value) else
            -1.0, where, np.array(heapq.nsmallest(2, x)), np.array(heapq.nlargest(2, x)),
            pair_sum, product_sum)


@aotc.export
def defaults_and_sizes(x: f64[:], m: f32[:, :]) -> tuple:
    """min/max(default=...) of runtime items (a filtered comprehension may keep none),
    and an array's itemsize and nbytes."""
    return (min([v for v in x if v > 10], default=-1.0), max([v for v in x if v > 0.3],
                                                             default=-1.0),
            max(x, default=7.0), m.itemsize, m.nbytes, x.nbytes)


def _sorted_by_pivots(x):  # recursion on selections: each call gets x[x < p], a new array
    if len(x) <= 1:
        return x
    p, rest = x[0], x[1:]
    return np.concatenate((_sorted_by_pivots(rest[rest < p]), x[:1],
                           _sorted_by_pivots(rest[rest >= p])))


@aotc.export
def pivot_sorted(x: f64[:]) -> f64[:]:
    return _sorted_by_pivots(x)


def _fft(x):  # Pythran's test kernel fft.py: arrays made by each call, returned
    n = x.shape[0]
    if n == 1:
        return np.array(x)
    e = _fft(x[::2])
    o = _fft(x[1::2])
    m = n // 2
    left = [e[k] + o[k] * math.e ** (-2j * math.pi * k / n) for k in range(m)]
    right = [e[k] - o[k] * math.e ** (-2j * math.pi * k / n) for k in range(m)]
    return np.array(left + right)


def _merged(x):  # a merge sort returning a new array from each call
    n = x.shape[0]
    if n <= 1:
        return x.copy()
    a, b = _merged(x[:n // 2]), _merged(x[n // 2:])
    out = np.empty(n)
    i = j = 0
    for k in range(n):
        if j >= b.shape[0] or (i < a.shape[0] and a[i] <= b[j]):
            out[k] = a[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
    return out


def _chain_length(n, known):  # Pythran's euler14.py: a memo dict down the recursion
    if n in known:
        return known[n]
    length = 1 + _chain_length(3 * n + 1 if n & 1 else n // 2, known)
    known[n] = length
    return length


def _tally(counts, k):  # a helper writing into the caller's dict
    counts[k] = counts.get(k, 0) + 1


@aotc.export
def longest_collatz(limit: i64) -> tuple:
    known = {1: 0}
    best, best_n = 0, 1
    for n in range(1, limit):
        length = _chain_length(n, known)
        if length > best:
            best, best_n = length, n
    return best_n, best, len(known)


@aotc.export
def tallied(x: i64[:]) -> tuple:
    counts = {}
    for v in x:
        _tally(counts, v % 4)
    return len(counts), counts.get(0, 0), counts.get(3, 0)


@aotc.export
def recursive_fft(x: c128[:]) -> c128[:]:
    return _fft(x)


@aotc.export
def merged_copy(x: f64[:]) -> f64[:]:
    return _merged(x)


@aotc.export
def merge_sorted_in_place(x: f64[:]) -> f64[:]:
    return _mergesort_inplace(x)


@aotc.export
def merge_sorted(x: f64[:]) -> f64:
    y = _mergesort(x.copy())
    return y[0] - y[-1] if y.size else 0.0


@aotc.export
def extremes(x: f64[:]) -> tuple:
    return _extremes(x, 0, x.shape[0])


# -- explicit index loops: checks proven for the whole range, or kept ---------------------------

@aotc.export
def shifted_into(x: f64[:], y: f64[:], lo: i64, hi: i64, k: i64) -> f64:
    """Writes into an argument up to an index out of range: the writes before it stay."""
    s = 0.0
    for i in range(lo, hi):
        y[i] = x[i + k] * 2.0
        s += y[i]
    return s


@aotc.export
def flat_transpose(x: f64[:], m: i64, n: i64) -> f64[:]:
    out = np.empty(m * n)
    for i in range(m):
        for j in range(n):
            out[j * m + i] = x[i * n + j]
    return out


@aotc.export
def gather_where_positive(x: f64[:], lo: i64, hi: i64, k: i64) -> f64[:]:
    """An index checked inside a branch: proven with the loop's others, or kept."""
    out = np.zeros(x.shape[0])
    for i in range(lo, hi):
        if x[i] > 0:
            out[i] = x[i + k]
    return out


# -- sizes computed while the kernel runs (bounded: aotc.value_bounds) ---------------------

@aotc.export
def lower_triangle_ramp(n: i64) -> f64[:, :]:
    """An arange whose length is the loop index: at most ``n``."""
    a = np.zeros((n, n))
    for i in range(n):
        a[i, :i + 1] = np.arange(1, i + 2)
    return a


@aotc.export
def count_then_fill(x: f64[:], t: f64) -> f64[:]:
    """Numba's two-pass idiom: a count kept in a loop (at most the trip count) sizes the
    output, which a second loop fills."""
    count = 0
    for i in range(x.shape[0]):
        if x[i] > t:
            count += 1
    out = np.empty(count)
    j = 0
    for i in range(x.shape[0]):
        if x[i] > t:
            out[j] = x[i]
            j += 1
    return out


@aotc.export
def positions_above(x: f64[:], t: f64) -> i64[:]:
    count = 0
    for v in x:
        count += v > t
    idx = np.empty(count, dtype=np.int64)
    j = 0
    for i, v in enumerate(x):
        if v > t:
            idx[j] = i
            j += 1
    return idx


@aotc.export
def positives_copied(x: f64[:]) -> f64[:]:
    out = np.zeros(np.count_nonzero(x > 0))
    out[:] = x[x > 0]
    return out


@aotc.export
def weighted_prefixes(x: f64[:]) -> f64:
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sum(np.arange(i + 1) * x[:i + 1])
    return s


@aotc.export
def ragged_row_sums(x: f64[:, :], lengths: i64[:]) -> f64[:]:
    """``min(k, n)`` of a value read from an array is at most ``n``; a negative length is
    NumPy's ValueError."""
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        k = min(lengths[i], x.shape[1])
        row = np.empty(k)
        row[:] = x[i, :k]
        out[i] = row.sum()
    return out


@aotc.export
def at_least_one_bin(x: i64[:], n: i64) -> i64[:]:
    m = n
    if m < 1:
        m = 1
    h = np.zeros(m, dtype=np.int64)
    for v in x:
        if 0 <= v < m:
            h[v] += 1
    return h


@aotc.export
def shrinking_count(n: i64) -> f64[:]:
    """A count that only falls stays at most its start: here negative, a ValueError."""
    k = 0
    for _ in range(n):
        k -= 1
    return np.zeros(k)


@aotc.export
def leading_small(x: f64[:]) -> f64[:]:
    """A while loop's test ``i < len(x)`` bounds the count it keeps."""
    i = 0
    while i < x.shape[0] and x[i] < 0.5:
        i += 1
    return np.ones(i)


@aotc.export
def simpson_even(a: f64, b: f64, n: i64) -> f64:
    if n % 2 == 1:
        n += 1
    x = np.linspace(a, b, n + 1)
    y = np.exp(-x * x)
    h = (b - a) / n
    return h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())


# -- arrays a loop resizes (aotc.autograph.resizing) ---------------------------------------

@aotc.export
def drop_leading_small(x: f64[:]) -> f64[:]:
    while x.shape[0] > 1 and x[0] < 0.5:
        x = x[1:]
    return x * 1.0


@aotc.export
def pairwise_halving(x: f64[:]) -> f64:
    while x.shape[0] > 1:
        n = x.shape[0] // 2
        x = x[:n] + x[n:2 * n]
    return x[0] if x.shape[0] else 0.0


@aotc.export
def diagonal_by_peeling(a: f64[:, :]) -> f64:
    s = 0.0
    while a.shape[0] > 0 and a.shape[1] > 0:
        s += a[0, 0]
        a = a[1:, 1:]
    return s


@aotc.export
def decimated(x: f64[:], k: i64) -> f64[:]:
    for _ in range(k):
        x = x[::2]
    return x + 0.0


@aotc.export
def trim_trailing_rows(a: f64[:, 3], t: f64) -> f64[:, 3]:
    while a.shape[0] > 0 and a[-1, 0] < t:
        a = a[:-1]
    return a.copy()


@aotc.export
def repeated_differences(x: f64[:], m: i64) -> f64:
    total = 0.0
    for _ in range(m):
        y = x
        while y.shape[0] > 1:
            y = y[1:] - y[:-1]
        total += y[0] if y.shape[0] else 0.0
    return total


@aotc.export
def power_by_products(a: f64[:, :], p: i64) -> f64[:, :]:
    """The product's shape is a's columns: the same as the identity's only when a is
    square, which the second product needs (NumPy's ValueError otherwise)."""
    r = np.eye(a.shape[0])
    for _ in range(p):
        r = r @ a
    return r


@aotc.export
def appended_above(x: f64[:], t: f64) -> f64[:]:
    """np.append in a for loop: room for one more item per iteration."""
    out = np.zeros(0)
    for v in x:
        if v > t:
            out = np.append(out, v)
    return out


@aotc.export
def stacked_rows_above(a: f64[:, 3], t: f64) -> f64[:, 3]:
    out = np.zeros((0, 3))
    for i in range(a.shape[0]):
        if a[i, 0] > t:
            out = np.vstack((out, a[i:i + 1]))
    return out


@aotc.export
def doubling_sequence(n: i64) -> f64[:]:
    out = np.ones(1)
    for _ in range(n):
        out = np.concatenate((out, out[-1:] * 2))
    return out


@aotc.export
def windows_from(x: f64[:], s: i64, k: i64) -> f64:
    """Windows ``x[i:i + k]`` with both bounds runtime values of any sign: Python's
    clamping, and a negative ``k`` counting ``i + k`` from the end."""
    total = 0.0
    for i in range(s, s + 3):
        total += x[i:i + k].sum() * (i + 10)
    return total


# -- writes after an early return (the returned value is read while the write is seen) -----

@aotc.export
def filled_unless(x: f64[:], flag: i64) -> f64[:]:
    out = x.copy()
    if flag == 1:
        return out
    out[0] = 5.0
    out[2:] = -1.0
    return out


@aotc.export
def filled_until(flag: i64) -> tuple:
    out = np.zeros(3)
    for i in range(3):
        if flag == i:
            return out, 1.0
        out[i] = i + 1.0
    return out, 0.0


@aotc.export
def view_returned_after_writes(x: f64[:], flag: i64) -> f64[:]:
    out = x.copy()
    if flag > 0:
        out[0] = -1.0
        v = out[:2]
        out[1] = -2.0
        return v
    if flag < 0:
        return x
    return out[1:]


@aotc.export
def membership(c: i64, x: f64[:]) -> tuple:
    """``in`` a tuple, list or array of a runtime value, as Python tests it (==)."""
    return c in (1, 2, 3), c not in [4, 5], 0.5 in x, 2.0 not in x


@aotc.export
def python_extremes(x: f64[:]) -> tuple:
    """Python's min/max over items: a later NaN never compares better; a first NaN wins."""
    return min(x), max(x), min(x[x > 0.2]), max(x[x > 0.2])


@aotc.export
def first_of_nonempty(x: f64[:]) -> f64:
    if x.shape[0] == 0:
        raise ValueError("empty")
    return x[0]


@aotc.export
def sigma_clipped(x: f64[:], rounds: i64) -> tuple:
    """A boolean selection of the array itself, in a for and a while loop."""
    d = x
    for _ in range(rounds):
        d = d[d > d.mean() - 1.0]
    e = x
    while e.size > 2:
        n = e.size
        e = e[np.abs(e - e.mean()) < 1.5 * e.std()]
        if e.size == n:
            break
    return d, e


@aotc.export
def global_tables(x: f64[:], i: i64, idx: i64[:]) -> tuple:
    """Module-level arrays read at runtime indices, slices and index arrays (constants
    of the kernel, as Numba freezes them); IndexError outside them, as NumPy."""
    s = 0.0
    for k in range(x.shape[0]):
        s += WEIGHTS[k % 3] * x[k]
    return s, WEIGHTS[i], GRID[i, i + 1], GRID[i][-1], np.sum(GRID[i:, 1]), WEIGHTS[idx]


@aotc.export
def prefix_until_negative(x: f64[:], n: i64) -> f64[:]:
    """A runtime slice returned from inside a loop (its size bound in the body)."""
    for i in range(n):
        if x[i] < 0:
            return x[:i]
    return x


@aotc.export
def integrate_until_flat(y0: f64, dt: f64, nmax: i64) -> f64[:]:
    ys = np.zeros(nmax)
    ys[0] = y0
    for i in range(nmax - 1):
        ys[i + 1] = ys[i] - dt * ys[i] ** 2 + dt
        if abs(ys[i + 1] - ys[i]) < 1e-3:
            return ys[:i + 2]
    return ys


@aotc.export
def cycle_of(nxt: i64[:], start: i64) -> i64[:]:
    """The cycle a walk from ``start`` enters: a slice returned from a ``while True``."""
    seen = np.full(nxt.shape[0], -1)
    path = np.zeros(nxt.shape[0], dtype=np.int64)
    v, k = start, 0
    while True:
        if seen[v] >= 0:
            return path[seen[v]:k]
        seen[v] = k
        path[k] = v
        k += 1
        v = nxt[v]


@aotc.export
def rows_before_negative(a: f64[:, :]) -> f64[:, :]:
    for i in range(a.shape[0]):
        if a[i, 0] < 0:
            return a[:i, 1:]
    return a[:, :1]


@aotc.export
def power_iteration(a: f64[:, :], v0: f64[:], tol: f64) -> tuple:
    """``v = a @ v`` carried with unnamed sizes, returned from inside the loop."""
    v = v0 / np.linalg.norm(v0)
    lam = 0.0
    for it in range(500):
        w = a @ v
        lam_new = np.sum(v * w)
        v = w / np.linalg.norm(w)
        if abs(lam_new - lam) < tol:
            return lam_new, v, it
        lam = lam_new
    raise RuntimeError("no convergence")


@aotc.export
def normalized(x: f64[:], inplace: bool_) -> f64[:]:
    """A name that is the argument on one path only: writes reach it on that path."""
    if not inplace:
        x = x.copy()
    x /= x.sum()
    return x


@aotc.export
def doubled_into(x: f64[:], inplace: bool_) -> tuple:
    out = x if inplace else x.copy()
    alias = out
    s = 0.0
    for i in range(x.shape[0]):
        out[i] = out[i] * 2.0 + i
        s += x[i]
    if not inplace:
        out = np.zeros(2)
    out[0] = -1.0
    x[-1] = 7.0
    return s, out, alias


@aotc.export
def rebound_then_written(x: f64[:], flag: i64) -> tuple:
    """Arrays of other sizes on the two paths, then written (one of them an argument)."""
    out = x.copy()
    if flag == 1:
        out = np.zeros(3)
    out[0] = 5.0
    other = x
    if flag == 2:
        other = np.ones(4)
    other[1] = 9.0
    return out, other


@aotc.export
def courant(c: f64, dt: f64, dx: f64) -> f64:
    """Python numbers divided by zero raise ZeroDivisionError, as Python's do; NumPy
    scalars give NumPy's inf, as theirs do."""
    return abs(c) * dt / dx


@aotc.export
def int_steps(n: i64, k: i64) -> tuple:
    return n // k, n % k, -n // k


@aotc.export
def loop_divisions(x: f64[:], n: i64, t: float) -> f64:
    """A range's items are Python ints, math's results Python floats, an array's items
    NumPy scalars (inf, no error)."""
    s = x[0] / (x[1] - x[1])
    for i in range(n):
        s += 1.0 / (i - 2) + math.sqrt(t) / (t - 4.0)
    return s


@aotc.export
def decode_runs_counted(vals: i64[:], cnts: i64[:], n: i64) -> i64[:]:
    """A size summed from the data in a loop, then the array it sizes: the entry points
    run that loop before the kernel (an index error in it is the kernel's own)."""
    total = 0
    for i in range(n):
        total += cnts[i]
    out = np.zeros(total, dtype=np.int64)
    k = 0
    for i in range(n):
        for _ in range(cnts[i]):
            out[k] = vals[i]
            k += 1
    return out


@aotc.export
def collatz_path(n: i64) -> i64[:]:
    steps, m = 0, n
    while m > 1:
        m = m // 2 if m % 2 == 0 else 3 * m + 1
        steps += 1
    path = np.empty(steps + 1, dtype=np.int64)
    m = n
    for k in range(steps + 1):
        path[k] = m
        m = m // 2 if m % 2 == 0 else 3 * m + 1
    return path


@aotc.export
def path_to(prev: i64[:], target: i64) -> i64[:]:
    """A list appended to in a while loop: the entry points count its appends first."""
    path = []
    v = target
    while v != -1:
        path.append(v)
        v = prev[v]
    return np.array(path[::-1], dtype=np.int64)


@aotc.export
def rod_cuts(first: i64[:], n: i64) -> tuple:
    cuts = []
    sizes = []
    rem = n
    while rem > 0:
        piece = first[rem]
        cuts.append(piece)
        if piece > 1:
            sizes.append(float(piece) / 2)
        rem -= piece
    return np.array(cuts, dtype=np.int64), np.array(sizes), len(cuts)


@aotc.export
def python_numbers_through(x: f32[:], flag: i64, n: i64, m: i64) -> tuple:
    """Python numbers stay Python numbers through a branch and a loop: weak (float32
    stays float32) and dividing by them by zero raises."""
    c = 0
    if flag > 0:
        c = 1
    s = 0.0
    for _ in range(n):
        s += 1.0
    return x * s, c % m, 1.0 / s


@aotc.export
def shrink_by_fifths(x: f64[:]) -> f64[:]:
    cur = x
    while cur.shape[0] > 5:
        cur = cur[::5] + 1.0
    return cur


@aotc.export
def zipped_pairs(x: f64[:], y: f64[:]) -> f64[:]:
    out = []
    for a, b in zip(x, y, strict=False):
        if a * b > 0:
            out.append(a - b)
    return np.array(out)


@aotc.export
def lis_path(x: f64[:]) -> i64[:]:
    """A longest increasing subsequence: a DP over predecessors the kernel computes,
    then a while loop appending the path back (counted before the kernel runs, on a
    copy of that DP)."""
    n = x.shape[0]
    length = np.ones(n, dtype=np.int64)
    prev = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for j in range(i):
            if x[j] < x[i] and length[j] + 1 > length[i]:
                length[i] = length[j] + 1
                prev[i] = j
    path = []
    k = int(np.argmax(length)) if n else -1
    while k != -1:
        path.append(k)
        k = prev[k]
    return np.array(path[::-1], dtype=np.int64)


@aotc.export
def path_back(p: i64[:], s: i64) -> i64[:]:
    prev = p.copy()
    prev[0] = -1
    path = []
    k = s
    while k != -1:
        path.append(k)
        k = prev[k]
    return np.array(path, dtype=np.int64)


@aotc.export
def sized_by_contents(x: f64[:]) -> tuple:
    """Sizes from the data alone, computed before the kernel runs."""
    i = 0
    y = x
    while y[0] > 0.5:
        i += 1
        y = y * 0.5
    return np.zeros(int(x[0] * 3)), np.ones(i)


@aotc.export
def range_items_are_python_ints(x: f32[:], small: u8[:], c: u8) -> tuple:
    """A range item is a Python int, weak in NumPy's promotion: ``x[i] * i`` stays
    float32, ``i * np.float32(0.5)`` accumulates in float32, and ``i + c`` with a uint8
    ``c`` wraps as uint8."""
    out = np.empty_like(x)
    s = np.float32(0)
    for i in range(x.shape[0]):
        out[i] = x[i] * i + 0.1
        s = s + i * np.float32(0.5)
    moved = np.zeros_like(small)
    for i in range(small.shape[0]):
        moved[i] = small[(i + c) % small.shape[0]]
    return out, s, moved


@aotc.export
def runtime_steps(x: f64[:], a: i64, b: i64, k: i64) -> tuple:
    """``range`` with a step known at run time only, either sign (and Python's ValueError
    for 0), and blocks of ``k`` items."""
    s = 0.0
    for i in range(a, b, k):
        s += x[i % x.shape[0]] * i
    blocks = np.zeros(x.shape[0])
    for start in range(0, x.shape[0], abs(k) + 1):
        blocks[start] = x[start:start + abs(k) + 1].sum()
    return s, blocks


@aotc.export
def widened_accumulators(x: f32[:], k: f64[:]) -> tuple:
    """Scalars the loop body widens (float32 by float64 terms, int64 by floats): the
    wider dtype from the start, as Numba unifies them."""
    acc = np.float32(0)
    total = np.int64(0)
    for j in range(x.shape[0]):
        acc += x[j] * k[j]
        total = total + k[j]
    return acc, total


@aotc.export
def mean_of_first(x: f64[:], r: i64) -> f64:
    """A Python float that an empty loop leaves one: ``s / c`` raises ZeroDivisionError
    as in Python where the loop ran no time (NumPy's nan where it ran)."""
    s = 0.0
    c = 0
    for d in range(r):
        s += x[d]
        c += 1
    return s / c


@aotc.export
def writes_through_reshapes(x: f64[:], k: i64) -> tuple:
    """Writes through reshape/ravel of an array the kernel made (C-contiguous: NumPy's
    reshape is a view of it), reads of the view after the array is written."""
    a = x * 2.0
    b = a.reshape(2, -1)
    b[0, k] = 100.0
    c = a.ravel()
    c[-1] += 1.0
    a[0] = -5.0
    return a, b.sum(), c[0], b[1, 0]


# -- a list's truth: tests read only it (a list and a bool have no common type) ---------------

@aotc.export
def popped_while(n: i64) -> f64:
    """``while stack and k < n``: the list's truth, not the list, is the ``and``'s operand
    (it was joined with the bool as if both were lists: a crash)."""
    stack = [1.0]
    total = 0.0
    k = 0
    while stack and k < n:
        total += stack.pop()
        if k % 3 != 2:
            stack.append(total)
        k += 1
    return total + len(stack)


@aotc.export
def depth_first_count(n: i64) -> i64:
    """``while stack:`` over a list popped and pushed in the loop."""
    stack = [0]
    seen = 0
    while stack:
        v = stack.pop()
        seen += 1
        if v < n:
            stack.append(v + 1)
            if v % 3 == 0:
                stack.append(v + 2)
    return seen


@aotc.export
def rising_run(x: f64[:]) -> tuple:
    """A list the loop reads (``not seen``, ``seen[-1]``) before its first append, and
    its truth after the loop (a list laid out: its length's)."""
    seen = []
    for v in x:
        if not seen or v > seen[-1]:
            seen.append(v)
    if not seen:
        return -1.0, 0
    return seen[-1], len(seen)


@aotc.export
def counted_if_any(x: f64[:], t: f64) -> i64:
    out = []
    for v in x:
        if v > t:
            out.append(v)
    if out:
        return len(out)
    return -1


@aotc.export
def both_signs(x: f64[:]) -> tuple:
    """Filtered comprehensions' truth (in ``bool(...)`` and a conditional expression)."""
    pos = [v for v in x if v > 0]
    neg = [v for v in x if v < 0]
    return bool(pos and neg), (pos[0] if pos and pos[0] > 2 else 0.0)


@aotc.export
def drained_by_while_loops(x: f64[:]) -> tuple:
    """A while loop that pops one list until it is empty and appends to another, and
    one that counts down while it pops (a copy of such a loop, run first to count the
    appends, used to empty the popped list: nothing came back)."""
    stack = [v for v in x]
    order = []
    while stack:
        v = stack.pop()
        if v > 0.3:
            order.append(v * 2.0)
    kept = [v for v in x]
    rest = []
    n = len(kept)
    while n > 1:
        rest.append(kept.pop())
        n -= 2
    return order, rest, len(kept)


@aotc.export
def compared_as_tuples(x: f64[:], y: f64[:]) -> list:
    """Tuples of runtime fields compared as Python compares them: the first unequal
    field decides, then the lengths; a tuple field compares the same way; NaN fields
    are unequal and unordered."""
    counts = [0, 0, 0, 0, 0, 0, 0, 0]
    for i in range(len(x)):
        a, b = (x[i], i % 2), (y[i], 0)
        counts[0] += int(a < b)
        counts[1] += int(a <= b)
        counts[2] += int(a > b)
        counts[3] += int(a >= b)
        counts[4] += int(a == b)
        counts[5] += int(a != b)
        counts[6] += int((x[i], (y[i], 1)) < (x[i], (y[i], i % 3)))
        counts[7] += int((x[i],) < (x[i], y[i])) + int((x[i], y[i]) <= (x[i],))
    return counts


@aotc.export
def priority_queues(x: f64[:], k: i64) -> tuple:
    """heapq on lists the kernel grows: (priority, index) entries popped in order, as a
    shortest-path search pops them; heappushpop, heapreplace, heapify of a
    comprehension; the heaps' own order of items is CPython's. bisect.insort keeps a
    list the kernel grows sorted."""
    queue = []
    for i in range(len(x)):
        heapq.heappush(queue, (x[i], i))
    order = []
    while queue:
        _, i = heapq.heappop(queue)
        order.append(i)
    h = []
    for v in x:
        heappush(h, v)
    first = heapq.heappop(h)
    pushed = heapq.heappushpop(h, 0.5)
    replaced = heapq.heapreplace(h, 0.25)
    doubled = [v * 2.0 for v in x[:k]]
    heapq.heapify(doubled)
    ordered = []
    for v in x:
        bisect.insort(ordered, v)
    bisect.insort_left(ordered, 0.5)
    bisect.insort_right(ordered, 0.25, 1)
    top = []  # the k largest: the smallest kept entry read in the branch that does not
    for i in range(len(x)):  # push (it was read before the trace met what is pushed)
        if len(top) < k:
            heapq.heappush(top, (x[i], i))
        elif x[i] > top[0][0]:
            heapq.heapreplace(top, (x[i], i))
    least = []  # the same, read in the first branch
    for i in range(len(x)):
        if len(least) >= k and x[i] < -least[0][0]:
            heapq.heapreplace(least, (-x[i], i))
        elif len(least) < k:
            heapq.heappush(least, (-x[i], i))
    return order, first, pushed, replaced, h, doubled, ordered, sorted(top), sorted(least)


@aotc.export
def merged_runs(a: f64[:], b: f64[:]) -> list:
    """The merge of two sorted runs: one list appended to in three while loops (the
    second and third met it as the array an earlier loop made of it, and could not grow
    it)."""
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    while i < len(a):
        out.append(a[i])
        i += 1
    while j < len(b):
        out.append(b[j])
        j += 1
    return out


@aotc.export
def grown_containers_algebra(x: i64[:], y: i64[:], a: i64, b: i64) -> tuple:
    """Lists, sets and dicts grown while the kernel runs, used as Python uses them:
    slices of a list (bounds from the end, clamped, steps both ways), set operators and
    methods, sorted(d.items(), key=...) (stable, reversed too), list.sort(key=...), and
    comprehensions and generators over their items."""
    lst = []
    i = 0
    while i < len(x) and x[i] < 90:
        lst.append(x[i])
        i += 1
    left, right = set(), set()
    for v in x:
        left.add(v % 7)
    for v in y:
        right.add(v % 5)
    totals = {}
    for v in x:
        totals[v % 6] = totals.get(v % 6, 0) + v
    by_total = sorted(totals.items(), key=lambda kv: kv[1] % 10)
    by_total_down = sorted(totals.items(), key=lambda kv: kv[1] % 10, reverse=True)
    keyed = [v for v in lst]
    keyed.sort(key=lambda v: v % 4)
    stack = [v for v in x]
    popped = []  # (a list grown beside a popped one: a box, where lst is an array)
    while stack:
        popped.append(stack.pop())
    return (lst[a:b], lst[a::2], lst[::-1], lst[b:a:-2], lst[-3:], popped[a:b],
            popped[a::2], popped[::-1], popped[b:a:-2], popped[1::2**70], popped[2**70:],
            sorted(left | right), sorted(left & right), sorted(left - right),
            sorted(left ^ right), sorted(left.union(right)), len(left.difference({0, 1})),
            [k for k, _ in by_total], [t for _, t in by_total_down], keyed,
            sorted(totals.values(), reverse=True), sorted({k * 2 for k in left}),
            [k for k in totals.keys() if k % 2 == 0], sum(t for t in totals.values()))


@aotc.export
def chosen_from_grown_dicts(x: i64[:]) -> tuple:
    """max/min over a dict grown at run time by key=d.get or a lambda, and over a list
    grown at run time by key= or of tuples, as Python picks: the first of the best keys
    (max of a grown list of tuples compared them elementwise and failed)."""
    d = {}
    for v in x:
        d[v % 5] = d.get(v % 5, 0) + 1
    kept = []
    i = 0
    while i < len(x) and x[i] < 95:
        kept.append(x[i])
        i += 1
    stack = [v for v in x]
    pairs = []  # (a list of tuples grown beside a popped one: a box)
    while stack:
        v = stack.pop()
        pairs.append((v % 4, v))
    return (max(pairs), min(pairs), max(d, key=d.get), min(d.keys(), key=lambda k: d[k]),
            max(kept, key=lambda v: v % 7), min(d.items(), key=lambda kv: kv[1] * 10 - kv[0]),
            sorted(d, key=d.get, reverse=True), max(d, key=lambda k: (d[k], -k)),
            min(kept, key=lambda v: (v % 3, -v)))


@aotc.export
def closures_read_late(x: f64[:], n: i64) -> tuple:
    """Nested functions read the kernel's variables as they are when called, as Python's
    closures do: a loop's rebinding (each helper saw the value from before the loop),
    an append, a branch, a lambda, a key= function and one helper calling another."""
    k = 0
    def current():
        return k
    seen = []
    def count():
        return len(seen)
    total, sizes = 0, 0
    for i in range(n):
        k = i
        total += current()
        seen.append(i)
        sizes += count()
    shift = 0.0
    centred = lambda v: v - shift  # noqa: E731 - a lambda bound late, as a def is
    spread = 0.0
    for v in x:
        spread += centred(v)
        shift = max(shift, v)
    target = 0.0
    def distance(j):
        return abs(x[j] - target)
    nearest = []
    for r in range(n):
        target = r / max(n, 1)
        nearest.append(min(range(x.shape[0]), key=distance))
    scale = 1.0
    def scaled(v):
        return v * scale
    def shifted(v):
        return scaled(v) + scale
    chained = 0.0
    for v in x:
        scale += 1.0
        chained += shifted(v)
    c = 1.0
    def times_c():
        return x.sum() * c
    if n > 2:
        c = 2.0
    before = 10
    def tens():
        return before * 10
    first = tens()
    before = n
    return total, sizes, spread, nearest, chained, times_c(), first, tens()


@aotc.export
def n_queens(n: i64) -> int:
    """Backtracking with an explicit stack and a nested test of the columns so far
    (it counted n**n placements when the test read ``cols`` from before the loop)."""
    count = 0
    cols = []
    def safe(c):
        r = len(cols)
        for i in range(r):
            if cols[i] == c or abs(cols[i] - c) == r - i:
                return False
        return True
    stack = [0]
    while stack:
        c = stack.pop()
        if c >= n:
            if cols:
                stack.append(cols.pop() + 1)
            continue
        if safe(c):
            cols.append(c)
            if len(cols) == n:
                count += 1
                stack.append(cols.pop() + 1)
            else:
                stack.append(0)
        else:
            stack.append(c + 1)
    return count


@aotc.export
def nested_appends(x: f64[:]) -> list:
    """A nested function that appends to the kernel's list, called in a loop."""
    out = []
    def push(v):
        out.append(v * 2.0)
    for v in x:
        if v > 0.0:
            push(v)
    return out


def _accumulated(x, n):
    acc = 0.0
    def add(v):
        return v + acc
    for i in range(n):
        acc = add(x[i % x.shape[0]])
    return acc


@aotc.export
def closures_in_calls(x: f64[:], n: i64) -> tuple:
    """Late-bound nested functions passed to map(), called in a comprehension, by
    keyword, as a generator, and nested in a helper the kernel calls."""
    m = 0.0
    mapped = []
    t = 0.0
    def above(v):
        return v > t
    counted = []
    off = 0.0
    def affine(v, scale=1.0):
        return v * scale + off
    by_keyword = 0.0
    step = 1
    def multiples(k):
        for i in range(k):
            yield i * step
    generated = 0
    for r in range(n):
        m += 1.0
        mapped.append(sum(map(lambda v: v * m, x)))
        t = r * 0.3
        counted.append(len([v for v in x if above(v)]))
        off += 1.0
        by_keyword += affine(v=m, scale=2.0)
        step = r
        for v in multiples(3):
            generated += v
    return mapped, counted, by_keyword, generated, _accumulated(x, n) if len(x) else 0.0


@aotc.export
def loop_targets_after_the_loop(x: f64[:], n: i64) -> tuple:
    """A for loop's target keeps its last item after the loop, as in Python (it kept
    the value from before the loop), in range, iterator, enumerate and nested loops;
    a loop that runs no times leaves it as it was."""
    i = -1
    for i in range(n):  # noqa: B007 - read after the loop
        pass
    last = 100
    for last in range(2, n, 3):  # noqa: B007 - read after the loop
        pass
    v = 0.5
    for v in x:  # noqa: B007 - read after the loop
        pass
    k = -1
    for k, _ in enumerate(x):  # noqa: B007 - read after the loop
        pass
    a, b = -1, -1
    for a in range(n):
        for b in range(a):  # noqa: B007 - read after the loop
            pass
    return i, last, v, k, a, b


@aotc.export
def assignment_expressions(x: f64[:], i: i64) -> tuple:
    """Walruses in an if test, a while test, a later operand of ``and`` (evaluated only
    where Python evaluates it: x[i] out of bounds is never read) and an assignment (the
    walrus bound the thunk's own variable, and the kernel raised NameError); walruses
    in list comprehensions, whose targets Python binds in the function (NameError)."""
    top = 0.0
    if (m := x.max(initial=0.0)) > 0.5:
        top = m * 2
    k, total = 0, 0.0
    while k < x.shape[0] and (v := x[k]) < 3.0:
        total += v
        k += 1
    picked = -1.0
    if 0 <= i < x.shape[0] and (w := x[i]) > 0.0:
        picked = w
    doubled = (s := x.sum()) + s
    kept = [y for v in x if (y := v * 2) > 1]
    running = 0.0
    sums = [(running := running + v) for v in x]
    return top, m, total, k, picked, doubled, s, kept, sums, running


@aotc.export
def assigned_before_a_break(x: f64[:], t: f64) -> float:
    """A variable first assigned in the branch of a loop over an array that breaks,
    read after the loop (an internal error: the flag saying whether it was assigned
    came from the body traced aside); the loop's else gives it a value otherwise."""
    for v in x:
        if v > t:
            found = v
            break
    else:
        found = -1.0
    for v in x:
        if v > 2 * t:
            second = v
            break
    return found + second


@aotc.export
def lists_sliced_and_joined(x: f64[:], y: i64[:], n: i64) -> tuple:
    """Slices of lists are lists: ``+`` joins them (it added them elementwise, or failed
    to broadcast), list() of a range or an array is a list, and a list of zipped
    tuples sorts by a tuple key (zip's strict=True raises where the lengths differ)."""
    numbers = list(range(n))
    interleaved = numbers[::2] + numbers[1::2]
    values = list(x)
    rotated = values[1:] + values[:1]
    squares = [i * i for i in range(n)]
    middle = squares[1:3]
    middle.reverse()
    pairs = list(zip(x, y, strict=True))
    pairs.sort(key=lambda t: (t[1], -t[0]))
    return interleaved, rotated, middle + [7], [t[0] for t in pairs]


@aotc.export
def counted_in_a_loop(x: i64[:]) -> tuple:
    """A collections.Counter changed in a runtime loop: a missing key counts 0 (it was
    a KeyError), and reading one does not add it (as a defaultdict's read would)."""
    counts = collections.Counter()
    for v in x:
        counts[v % 4] += 1
    return counts[1], counts[7], len(counts), sorted(counts.keys())


@aotc.export
def lists_compared_as_lists(x: i64[:], y: i64[:]) -> tuple:
    """Lists compare as Python's do, item by item then by length (they compared
    elementwise, as arrays, or failed to broadcast); lists of tuples field by field;
    ``del lst[i]`` and ``del lst[a:b]`` remove items (an AttributeError)."""
    a, b = list(x), list(y)
    copied = a[:]
    copied[0] = -1
    pairs = [(v % 2, v) for v in x]
    others = [(v % 2, v) for v in y]
    trimmed = [v * 2 for v in x]
    del trimmed[0]
    del trimmed[1:3]
    return (a == b, a != b, a < b, a <= b, a > b, a >= b, a == copied, copied < a,
            pairs < others, pairs == others, trimmed)


@aotc.export
def starred_targets(x: f64[:], n: i64) -> tuple:
    """``first, *rest = items`` of runtime lists, ranges and arrays: the rest is a list
    (it was refused as iteration needing every item at build time); too few items is
    Python's ValueError."""
    a, *middle, z = list(range(n))
    head, *tail = x
    p, q, *more = [1.0, 2.0, 3.0, x[0]]
    return a, middle, z, head, tail + [0.5], more, p + q


@aotc.export
def builtins_over_runtime_items(k: i64[:], v: f64[:], t: f64) -> tuple:
    """dict(zip(keys, values)) (it iterated at build time), list(d.keys()) of a dict
    grown at run time (a scan with no length bound), math.isqrt and math.gcd of runtime
    integers (refused), and next() of a generator expression, the first-match idiom
    (an internal error); max() and min() of several tuples, compared field by field
    (a 'concrete bool' error)."""
    table = dict(zip(k, v, strict=True))
    keys = list(table.keys())
    roots = [math.isqrt(abs(a)) + math.gcd(a, 12) for a in k]
    where = next((i for i, a in enumerate(v) if a > t), -1)
    best, least = (-1.0, -1), (1e9, 0)
    for i in range(len(v)):
        best = max(best, (np.round(v[i]), i))
        least = min((np.round(v[i]), -i), least)
    return sorted(table.items()), sorted(keys), roots, where, next(a * 2 for a in v), \
        best, least


@aotc.export
def rows_grown_and_extended(w: i64) -> tuple:
    """Lists of rows (lists of numbers) a loop grows: appended in a branch of a while
    loop whose trips are decided as it runs (the list was resized beyond its buffer),
    read back and unpacked there, and extended into another list per outer iteration
    (extend of a Python list by a runtime one iterated at build time)."""
    rows = [[0, 1, 2]]
    t = 0
    again = False
    budget = w
    while t < 3:
        if again:
            again = False
            [_, a, b] = rows[-1]
            t += max(a - b, 0)
        else:
            t = t + 1
        if budget <= t:
            rows.append([0, t, budget])
        else:
            again = True
            budget -= 1
    everything = []
    for rep in range(2):
        these = [[rep, 0]]
        k = 0
        while k < w:
            k += 1
            last = these[-1]
            these.append([rep, last[1] + 1])
        everything.extend(these)
    return rows, everything


@aotc.export
def views_chosen_in_branches(x: f64[:], flag: bool) -> tuple:
    """A view of one array that a runtime branch chooses at windows that differ where
    they start (in an elif chain, at starts the branch computes; in a loop), and one a
    loop moves along an array (brightest = grid[i]): writes into it reach the array,
    and writes into the array show in it (both were lost: the result was a copy). An
    array a loop narrows that no variable read later holds is written as itself."""
    y = x.copy()
    if flag:
        v = y[1:]
    else:
        v = y[:-1]
    v[0] = 100.0
    y[-2] = -5.0
    grid = np.outer(x, x)
    k = int(flag) + len(x) // 2
    if k == 0:
        row = grid[0]
    elif k < len(x):
        row = grid[k]  # (a start computed in the branch, passed out as a value)
    else:
        row = grid[-1]
    row += 10.0
    for i in range(len(x)):
        line = grid[i] if i % 2 else grid[i - 1]  # (alike: starts chosen by the test)
        line[0] = -1.0
    brightest = grid[0]
    for i in range(1, len(x)):  # (a view the loop moves: its starts are carried)
        if grid[i].sum() > brightest.sum():
            brightest = grid[i]
    brightest[-1] = 1000.0
    doubled = x * 2.0
    tail = doubled  # (narrowed by the loop; doubled is not read after it)
    while tail.shape[0] > 2:
        tail = tail[1:]
    tail[0] = 50.0
    tripled = x * 3.0
    inner = tripled[1:]  # (a view, narrowed by the loop; tripled is not read after it)
    while inner.shape[0] > 2:
        inner = inner[1:]
    inner[0] = 7.0
    return y, v.sum(), v * 1.0, grid, tail, inner


@aotc.export
def lists_through_branches_and_loops(x: f64[:], c: bool, k: i64) -> tuple:
    """A list passed into a branch or a loop body is still a list there, and after it:
    ``+`` joins (it added elementwise inside, a silent wrong answer with equal sizes,
    or failed to broadcast after a loop that rotates it); a Python list on one path and
    a laid-out one on the other join (the branches gave different numbers of values)."""
    lst = [v for v in x]
    if c:
        chosen = lst[1:] + lst[:1]
    else:
        chosen = lst[::-1]
    rotated = [v for v in x]
    for _ in range(k):
        rotated = rotated[1:] + rotated[:1]
    pair = [1, 2]
    if c:
        repeated = pair * k  # (laid out: k is a runtime count)
    else:
        repeated = pair + pair  # (a Python list: the paths joined as lists)
    return chosen + [0.5], rotated + [9.0], repeated + [0]


@aotc.export
def math_errors_as_python(a: f64, b: f64) -> list:
    """Python's errors where NumPy's answer is inf or an undefined int64: math.floor of
    NaN or infinity; a Python float's ``**`` of zero to a negative power
    (ZeroDivisionError); math.log to the base 1 (ZeroDivisionError)."""
    return [math.floor(a * b), abs(a) ** b, math.log(a, b)]


@aotc.export
def enumerated_in_c_order(x: f64[:, :], v: f64[:]) -> tuple:
    """``np.ndenumerate`` of arrays whose sizes the call gives (it was a build error:
    the array was converted to a NumPy array)."""
    out = np.zeros_like(x)
    for (i, j), a in np.ndenumerate(x):
        out[i, j] = a * i + j
    total = 0.0
    for (k,), a in np.ndenumerate(v):
        total += k * a
    return out, total


def _doubled(v: float) -> float:
    return v * 2.0


@aotc.export
def functions_chosen_at_run_time(x: f64[:], c: i64) -> tuple:
    """A function chosen by a runtime test (in a conditional expression, an if statement
    and a loop: a NumPy ufunc, a helper, a lambda, a builtin), then called: the chosen
    one runs (it was a build error, 'function values cannot be used')."""
    f = np.sin if c > 0 else np.cos
    if c > 1:
        g = _doubled
    else:
        g = lambda v: v + 100.0  # noqa: E731
    total = 0.0
    for i in range(len(x)):
        h = _doubled if x[i] > 0 else abs
        total += h(x[i])
    return f(x), g(x), total


@aotc.export
def counted_and_accumulated(k: i64[:], x: f64[:], n: i64, r: i64) -> tuple:
    """collections.Counter of runtime items and its most_common (ties in first-counted
    order); itertools.accumulate as a running sum, a running max, and a product by a
    lambda from initial=; math.comb (exact while the result fits int64), perm,
    factorial and prod of runtime values. All were refused or iterated at build time."""
    c = collections.Counter(k)
    common = c.most_common(2)
    sums = list(itertools.accumulate(x))
    peaks = list(itertools.accumulate(x, max))
    products = list(itertools.accumulate(x, lambda a, b: a * b, initial=1.0))
    counts = (math.comb(n, r), math.perm(n, min(r, 5)), math.factorial(min(r, 20)))
    return c[3], len(c), common, sums, peaks, products, counts, math.prod(x, start=1.0)


def _taken_until(x: f64[:], t: float) -> list:
    out = []
    for v in x:
        if v > t:
            return out
        out.append(v)
    return out


def _yielded_until(x: f64[:], t: float):  # noqa: ANN202 - a generator
    for v in x:
        if v > t:
            return
        yield v


def _gaps_until(x: f64[:], n: int) -> list:
    out = []
    for i in range(len(x)):
        for j in range(i):
            if i * j > n:
                return out
            out.append(x[i] - x[j])
    return out


def _kept_before_negative(x: f64[:], t: float) -> list:
    out = []
    i = 0
    while i < len(x):
        if x[i] < 0:
            return out
        if x[i] > t:
            out.append(x[i])
        i += 1
    return out


def _kept_until_the_end(x: f64[:], t: float) -> list:
    out = []
    i = 0
    while True:
        if i >= len(x):
            return out
        if x[i] > t:
            out.append(x[i])
        i += 1


@aotc.export
def returns_from_loops_that_grow_lists(x: f64[:], t: f64, n: i64) -> tuple:
    """``return out`` inside the loop that appends to ``out`` (kinds of values differed
    at the join: a list grown at run time against an array), inside the inner of two
    loops (an internal error: the placeholder of the returned list was the probe's own
    box), inside a while loop that appends in a branch ('np.array of an empty list':
    the empty list on one path had no dtype), inside ``while True`` (the unrolled first
    iteration's empty list did not join the loop's box), and a generator's ``return``
    inside its loop (a located error before)."""
    return _taken_until(x, t), list(_yielded_until(x, t)), \
        sum(_yielded_until(x, t), 0.0), _gaps_until(x, n), _kept_before_negative(x, t), \
        _kept_before_negative(-x, -t), _kept_until_the_end(x, t)


@aotc.export
def grown_rows_joined(x: f64[:, :]) -> tuple:
    """np.concatenate, vstack, hstack and stack of a list of rows a loop grew (laid out
    as one array: NumPy's dispatch iterated it, an internal error for concatenate, a
    build error for the others), and of one array, whose items NumPy joins."""
    rows = []
    for i in range(x.shape[0]):
        rows.append(x[i] * i)
    flat = np.zeros(x.shape[0] * x.shape[1])
    np.concatenate(rows, out=flat)  # (out= as for a list of arrays)
    return np.concatenate(rows), np.vstack(rows), np.hstack(rows), np.stack(rows, axis=1), \
        np.concatenate(x, axis=None), np.vstack(x[0]), flat


@aotc.export
def views_swapped_in_loops(x: f64[:, :], n: i64) -> tuple:
    """A loop that swaps two views of one array and writes through them (``In, Out =
    Out, In`` with ``Out = y.T``; halves of one buffer at sizes the build cannot see
    equal): the loop carried each apart from the array, and every write was lost from
    it (a silent wrong answer). Now the body runs two trips at a time, which hands the
    views back as they came, then the odd trip under an ``if``, whose branch that swaps
    them leaves the array as both names see it. ``flatten`` is a copy (it was a view,
    as ``ravel``: its writes reached ``y``)."""
    y = x + 1.0
    y.flatten()[:1] = -7.0
    inp = y
    out = y.T
    for _ in range(n):
        out[1:-1, 1:-1] = 0.25 * (inp[:-2, 1:-1] + inp[1:-1, 2:] + inp[2:, 1:-1] + inp[1:-1, :-2])
        inp, out = out, inp
    flat = (x * 2.0).flatten()
    half = flat.shape[0] // 2
    a = flat[:half]
    b = flat[half:2 * half]
    for i in range(n):
        a[1:] = b[:-1] + a[0] + i
        a, b = b, a
    z = x.copy()
    first = z
    second = z[:, ::-1]
    if n % 3 == 1:
        second[0, :] = first[-1, :] * 3.0
        first, second = second, first
    return y, flat, z, first.sum()


@aotc.export
def names_of_one_array_in_loops(x: f64[:], n: i64) -> tuple:
    """Two names of one array that a loop carries (``inp = out = y``, swapped), an
    argument a loop writes and then rebinds (its first trip writes the caller's array),
    and one that another name reads: each name was carried as an array of its own, and
    the writes missed the others (silent wrong answers). Now names of one array stay one
    array in the body, and the first trip's writes reach the array a rebound name
    started as."""
    y = x.copy()
    inp = y
    out = y
    for _ in range(n):
        for i in range(1, y.shape[0]):
            out[i] = inp[i - 1] * 0.5 + 1.0
        inp, out = out, inp
    u = x.copy()
    kept = u
    for t in range(n):
        u[0] = -1.0 - t  # the first trip writes ``kept``
        u = u * 2.0
    w = x.copy()
    v = w
    s = 0.0
    t = 0
    while t < n:
        w[t % w.shape[0]] += 3.0
        s += v[0]  # on the first trip ``v`` is ``w``
        v = v + 1.0
        t += 1
    lst = [0.0] * x.shape[0]
    other = lst
    for _ in range(n):
        for i in range(1, len(lst)):
            other[i] = lst[i - 1] + 1.0
        lst, other = other, lst
    return y, u, kept, w, v, s, np.array(lst)


@aotc.export
def list_items_that_are_views(x: f64[:, :], y: f64[:], k: i64) -> tuple:
    """A list of an array's rows (or columns) read at a runtime index is that row, a
    view: a write into it reaches the array, and it sees the array's later writes. A
    list of arrays of their own read so is the chosen one: writes reach it. Each item
    was a row of a copy of the rows (np.array(rows)), and every write was lost; arrays
    of different sizes were a ValueError, and a dict read at a runtime key a build
    error."""
    z = x.copy()
    rows = [z[0], z[2], z[1]]
    for t in range(k):
        rows[t % 3][1] += 1.0
    r = rows[k % 3]
    r[0] = -5.0
    z[k % 3, 2] = 100.0  # r sees it when it is that row
    cols = (z[:, 0], z[:, -1])
    cols[k % 2][:] = 7.0
    w = y.copy()
    v = y[:-1] * 2.0  # (another size: np.array(pair) refused it, Python's list holds it)
    pair = [w, v]
    pair[k % 2][0] = 42.0
    by_key = {3: w, 5: v}
    by_key[3 + 2 * (k % 2)][-1] = -4.0  # a dict read at a runtime key
    return z, r.sum(), w, v


@aotc.export
def flat_writes_and_unit_axes(x: f64[:, :], k: i64) -> tuple:
    """``x.flat[...] = v`` writes into ``x`` whatever its layout (NumPy's flatiter
    writes through; it was the located error of a write through a ravel), in place, so
    a later raise leaves the caller's ``x`` written as Python's does; a write through
    ``x.ravel()`` reaches ``x`` where the call's ``x`` is C-contiguous (it was a build
    error). ``np.atleast_2d`` and ``np.atleast_3d`` of a 1-d array are views (they were
    copies: writes into them were lost)."""
    x.flat[k] = -1.0
    x.flat[1:3] = x.flat[1:3] + 2.0  # (x.flat[1:3] += 2.0 is still a located error)
    x.flat[x.ravel() > 8.0] = 0.0
    z = x * 2.0
    z.flat[[0, 2]] = 5.0
    row = x[0].copy()
    a = np.atleast_2d(row)
    a[0, 1] = 9.0
    b = np.atleast_3d(row)
    b[0, 2, 0] = 8.0
    x.view()[0, -1] += 0.25  # (x.view() was not supported)
    r = x.ravel()  # a view where x is C-contiguous, else a copy: as NumPy's
    r[-1] = 3.0
    if k > 5:
        raise ValueError("k too big")
    return z, row


@aotc.export
def ravel_items_through_a_mask(x: f64[:, :]) -> f64:
    """Items in order, written through a mask of ``x.ravel()``: into ``x`` where it is
    C-contiguous (the same positions keep their values otherwise, as a copy's)."""
    r = x.ravel()
    big = r > 4.5
    r[big] = np.arange(np.count_nonzero(big)) * 0.5
    return r.sum()


@aotc.export
def reshaped_argument_written(x: f64[:, :], k: i64) -> f64:
    """A write through ``x.reshape(...)`` of an argument, read back after a write into
    ``x``: a view where ``x`` is C-contiguous (it was a build error)."""
    g = x.reshape(x.shape[1], x.shape[0])
    g[0, k] = -2.0
    x[0, 0] += 10.0
    return g[0, 0] + g.sum()


@aotc.export
def dict_at_runtime_key(x: f64[:], k: i64) -> f64:
    """A dict the kernel built, read at a runtime key: the value of the key equal to
    it, or Python's KeyError naming the key."""
    table = {1: x[0], 4: x[1] * 2.0, 9: x.sum()}
    return table[k] + {0: 0.5, 1: 1.5}[k % 2]


@aotc.export
def short_list_before_a_grown_one(n: i64) -> list:
    """``return [2]`` on one path, a list a runtime loop grows on the other (Pythran's
    primes): the two paths' lists were values of different types, a build error."""
    if n == 2:
        return [2]
    out = [2, 3]
    for k in range(5, n, 2):
        out.append(k)
    return out


@aotc.export
def special_functions(x: f64[:], y: f64) -> tuple:
    """math.gamma and math.lgamma (CPython's Lanczos sums, with its ValueError at the
    poles and OverflowError past gamma(171.6)), math.fsum (exact), remainder, ulp,
    ldexp, frexp, modf, nextafter, dist and lcm of runtime values: each a build error."""
    g = 0.0
    for v in x:
        g += math.gamma(v) + math.lgamma(v)
    parts = math.frexp(y)
    return (g, math.fsum(x), math.remainder(y, 0.75), math.ulp(y), math.ldexp(y, 3),
            parts[0], parts[1], math.modf(y), math.nextafter(y, 0.0),
            math.dist(x[:2], x[1:3]), math.lcm(int(y), 6))


@aotc.export
def weak_special_functions(x: f32[:], y: f64) -> f32[:]:
    """math.gamma of a runtime value is a Python float: weak beside float32 items."""
    return x * math.gamma(y) + math.fsum([y, y])


@aotc.export
def complex_math(z: c128, r: f64) -> tuple:
    """cmath of runtime values (C double complex, as cmath computes): each a build
    error ("float() of a traced value")."""
    return (cmath.exp(z), cmath.sqrt(r), cmath.log(z, 2.0), cmath.phase(z), cmath.polar(z),
            cmath.rect(r, 0.5), cmath.isfinite(z), cmath.cosh(z))


Point = namedtuple("Point", ["x", "y"])


@aotc.export
def best_named_point(xs: f64[:], ys: f64[:]) -> tuple:
    """A namedtuple carried by a runtime loop (it was an internal error: the loop
    rebuilt it with one argument where its class takes one per field)."""
    best = Point(xs[0], ys[0])
    for i in range(len(xs)):
        p = Point(xs[i], ys[i])
        if p.x + p.y > best.x + best.y:
            best = p
    return best.x, best.y


@aotc.export
def python_order_sums(x: f32[:], z: c64[:], w: c64[:]) -> tuple:
    """Builtin sum adds one item after another, as Python does (NumPy's pairwise order
    differs in float32's last bit), and a loop multiplies complex scalars as NumPy's
    scalars do (unfused: its SIMD loops fuse a multiply-add, a bit apart): SciPy's
    _funm_loops in complex64 differed from Python by 2e-7."""
    acc = z[0] * w[0]
    for i in range(1, len(z)):
        acc = acc + z[i] * w[i] - z[i - 1] * w[i]
    return sum(x), sum(v * v for v in x if v > 0.5), acc
