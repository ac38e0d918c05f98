"""Kernels written with Python loops, which compile to structured loops."""

import numpy as np

import aotc
from aotc import f32, f64, i64, u8


@aotc.export
def ema(x: f64[:], alpha: float) -> f64[:]:
    """Exponential moving average: a recurrence over a runtime-length array."""
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = alpha * x[i] + (1 - alpha) * y[i - 1]
    return y


@aotc.export
def running_max_drawdown(prices: f64[:]) -> f64:
    """Largest drop from a running peak, with an if inside the loop."""
    peak = prices[0]
    worst = 0.0
    for p in prices:
        if p > peak:
            peak = p
        worst = max(worst, peak - p)
    return worst


@aotc.export
def isqrt_newton(a: f64[:]) -> f64[:]:
    """Square roots by Newton's iteration until converged (a while loop per element)."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        x = max(a[i], 1.0)
        while abs(x * x - a[i]) > 1e-12 * max(a[i], 1.0):
            x = 0.5 * (x + a[i] / x)
        out[i] = x
    return out


@aotc.export
def mandelbrot(re: f64["n"], im: f64["n"], limit: i64) -> i64[:]:
    """Escape counts of points c = re + i*im."""
    counts = np.zeros(re.shape[0], dtype=np.int64)
    for p in range(re.shape[0]):
        zr, zi = 0.0, 0.0
        n = 0
        while (zr * zr + zi * zi < 4.0) & (n < limit):
            zr, zi = zr * zr - zi * zi + re[p], 2 * zr * zi + im[p]
            n += 1
        counts[p] = n
    return counts


@aotc.export
def gray_scott(u: f64[:, :], v: f64[:, :], steps: i64):
    """Reaction-diffusion iterated ``steps`` times, updating u and v in place."""
    du, dv, f, k = 0.16, 0.08, 0.035, 0.065
    for _ in range(steps):
        uc, vc = u[1:-1, 1:-1], v[1:-1, 1:-1]
        lu = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * uc
        lv = v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:] - 4 * vc
        uvv = uc * vc * vc
        u[1:-1, 1:-1] = uc + du * lu - uvv + f * (1 - uc)
        v[1:-1, 1:-1] = vc + dv * lv + uvv - (f + k) * vc
    return u, v


@aotc.export
def cumulative_scan(x: f64[:]):
    """A running sum and product with aotc.lax.scan, JAX's structured form."""
    def step(carry, v):
        s, p = carry
        return (s + v, p * v), s + v
    (total, product), partial = aotc.lax.scan(step, (0.0, 1.0), x)
    return total, product, partial


# -- index loops, as Numba users write them: each index is checked once per loop -----------

@aotc.export
def neighbour_sums(img: u8[:, :]) -> u8[:, :]:
    """Sums of horizontal neighbours, wrapping as uint8 does."""
    h, w = img.shape
    out = np.zeros((h, w - 1), dtype=np.uint8)
    for i in range(h):
        for j in range(w - 1):
            out[i, j] = img[i, j] + img[i, j + 1]
    return out


@aotc.export
def heat_steps(u: f64[:], steps: i64) -> f64[:]:
    """Explicit 1-D heat diffusion, the ends held fixed."""
    n = u.shape[0]
    for _ in range(steps):
        new = u.copy()
        for i in range(1, n - 1):
            new[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1])
        u = new
    return u


@aotc.export
def knapsack(w: i64[:], v: i64[:], cap: i64) -> i64:
    """The best value of a 0/1 knapsack of capacity ``cap`` (dynamic programming)."""
    dp = np.zeros(cap + 1, dtype=np.int64)
    for i in range(w.shape[0]):
        for c in range(cap, w[i] - 1, -1):
            if dp[c - w[i]] + v[i] > dp[c]:
                dp[c] = dp[c - w[i]] + v[i]
    return dp[cap]


@aotc.export
def box_blur(img: f32[:, :], r: i64) -> f32[:, :]:
    """The mean over a (2r+1)² window, by four loops; the border stays zero."""
    h, w = img.shape
    out = np.zeros_like(img)
    for i in range(r, h - r):
        for j in range(r, w - r):
            s = np.float32(0.0)
            for di in range(-r, r + 1):
                for dj in range(-r, r + 1):
                    s += img[i + di, j + dj]
            out[i, j] = s / np.float32((2 * r + 1) ** 2)
    return out


@aotc.export
def convolve_valid(x: f64[:], k: f64[:]) -> f64[:]:
    """``np.correlate(x, k, "valid")`` by two loops."""
    n, m = x.shape[0], k.shape[0]
    out = np.zeros(n - m + 1)
    for i in range(n - m + 1):
        acc = 0.0
        for j in range(m):
            acc += x[i + j] * k[j]
        out[i] = acc
    return out


@aotc.export
def monte_carlo_pi(n: i64, seed: i64) -> f64:
    """π from ``n`` random points in the unit square: NumPy's stream for ``seed``."""
    np.random.seed(seed)
    inside = 0
    for _ in range(n):
        x = np.random.random()
        y = np.random.random()
        if x * x + y * y < 1.0:
            inside += 1
    return 4.0 * inside / n
