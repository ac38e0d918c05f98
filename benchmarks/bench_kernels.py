"""The benchmark kernels, in plain NumPy: compiled by aotc, and run as they are by NumPy,
Numba, JAX and numexpr for comparison (see run.py)."""


import numpy as np

import aotc
from aotc import c128, f32, f64, i64


@aotc.export
def triad(b: f64["n"], c: f64["n"], s: float) -> f64[:]:
    """STREAM triad: the machine's memory bandwidth."""
    return b + s * c


@aotc.export
def triad_out(a: f64["n"], b: f64["n"], c: f64["n"], s: float) -> f64[:]:
    """STREAM triad written into an argument, which is returned (one store pass)."""
    a[:] = b + s * c
    return a


@aotc.export
def array_sum(b: f64[:]) -> f64:
    """sum(b): the read bandwidth."""
    return np.sum(b)


@aotc.export
def axpy_sum(x: f64["n"], y: f64["n"], z: f64["n"]) -> f64:
    return np.sum(x + y * z)


@aotc.export
def selu(x: f32[:]) -> f32[:]:
    alpha, scale = 1.6732632, 1.0507010
    return scale * np.where(x > 0, x, alpha * (np.exp(x) - 1))


@aotc.export
def black_scholes(s: f64["n"], k: f64["n"], t: f64["n"], r: float, v: float):
    """Call and put prices; the normal CDF is the Abramowitz-Stegun polynomial used by the
    Numba and Pythran versions of this benchmark."""
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)
    discount = np.exp(-r * t)
    call = s * cnd(d1) - k * discount * cnd(d2)
    put = k * discount * cnd(-d2) - s * cnd(-d1)
    return call, put


def cnd(d):
    a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    rsqrt2pi = 0.39894228040143267793994605993438
    kk = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    poly = kk * (a1 + kk * (a2 + kk * (a3 + kk * (a4 + kk * a5))))
    ret = rsqrt2pi * np.exp(-0.5 * d * d) * poly
    return np.where(d > 0, 1.0 - ret, ret)


@aotc.export
def softmax(x: f32[:, :]) -> f32[:, :]:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@aotc.export
def layernorm(x: f32[:, "d"], g: f32["d"], b: f32["d"]) -> f32[:, :]:
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


@aotc.export
def rosen(x: f64[:]) -> f64:
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@aotc.export
def arc_distance(theta_1: f64["n"], phi_1: f64["n"], theta_2: f64["n"], phi_2: f64["n"]):
    temp = (np.sin((theta_2 - theta_1) / 2) ** 2
            + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2) ** 2)
    return 2 * np.arctan2(np.sqrt(temp), np.sqrt(1 - temp))


@aotc.export
def harris(image: f64[:, :]) -> f64[:, :]:
    m, n = image.shape
    dx = (image[1:, :] - image[:m - 1, :])[:, 1:]
    dy = (image[:, 1:] - image[:, :n - 1])[1:, :]
    a, b, c = dx * dx, dy * dy, dx * dy
    trace = a + b
    return a * b - c * c - 0.05 * trace * trace


@aotc.export
def pairwise(points: f64[:, 3]) -> f64[:, :]:
    diff = points[:, None, :] - points[None, :, :]
    return np.sqrt((diff ** 2).sum(axis=-1))


@aotc.export
def log_likelihood(data: f64[:], mean: float, sigma: float) -> f64:
    s = (data - mean) ** 2 / (2 * sigma ** 2)
    pdfs = np.exp(-s) / (np.sqrt(2 * np.pi) * sigma)
    return np.log(pdfs).sum()


@aotc.export
def tiny(x: f64[:]) -> f64[:]:
    """Call overhead: x + 1.0 on a handful of elements."""
    return x + 1.0


# -- sorting: against NumPy's own sorts (x86-simd-sort on AVX-512/AVX2 machines) -----------

@aotc.export
def sort_f64(x: f64[:]) -> f64[:]:
    return np.sort(x)


@aotc.export
def sort_i64(x: i64[:]) -> i64[:]:
    return np.sort(x)


@aotc.export
def sort_f32(x: f32[:]) -> f32[:]:
    return np.sort(x)


@aotc.export
def argsort_f64(x: f64[:]) -> i64[:]:
    return np.argsort(x)


@aotc.export
def argsort_i64(x: i64[:]) -> i64[:]:
    return np.argsort(x)


@aotc.export
def stable_sort_f64(x: f64[:]) -> f64[:]:
    return np.sort(x, kind="stable")


@aotc.export
def unique_f64(x: f64[:]) -> f64[:]:
    return np.unique(x)


@aotc.export
def unique_i64(x: i64[:]) -> i64[:]:
    return np.unique(x)


@aotc.export
def noisy(x: f64[:], seed: i64) -> f64[:]:
    """Gaussian noise from np.random, seeded: NumPy's own values (the polar method)."""
    np.random.seed(seed)
    return x + np.random.normal(0.0, 0.1, x.shape[0])


@aotc.export
def sum_positive(x: f64[:]) -> f64:
    """A value-dependent size: the selection is summed without an intermediate array."""
    return np.sum(x[x > 0])


@aotc.export
def mandelbrot_grid(c: c128[:, :]) -> i64[:, :]:
    """Escape-time counts on a complex grid, 50 iterations of whole-array NumPy."""
    z = np.zeros_like(c)
    count = np.zeros(c.shape, dtype=np.int64)
    for _ in range(50):
        z = np.where(np.abs(z) <= 2, z * z + c, z)
        count += np.abs(z) <= 2
    return count


@aotc.export
def median_rows(x: f32[:, :]) -> f32[:]:
    return np.median(x, axis=1)


# -- matrix products: against OpenBLAS (single-threaded) ----------------------------------

@aotc.export
def matmul_f64(a: f64[:, "k"], b: f64["k", :]) -> f64[:, :]:
    return a @ b


@aotc.export
def matmul_f32(a: f32[:, "k"], b: f32["k", :]) -> f32[:, :]:
    return a @ b


@aotc.export
def matmul_small_f64(a: f64[:, "k"], b: f64["k", :]) -> f64[:, :]:
    """Call overhead and the unpacked path: 64 x 64 x 64."""
    return a @ b


@aotc.export
def matmul_small_f32(a: f32[:, "k"], b: f32["k", :]) -> f32[:, :]:
    return a @ b


@aotc.export
def mlp_layer(x: f32[:, "d"], w: f32["d", :]) -> f32[:, :]:
    """One dense layer's product: x (256 x 784) @ W (784 x 512)."""
    return x @ w


@aotc.export
def mlp(x: f32[:, "d"], w1: f32["d", "h"], b1: f32["h"], w2: f32["h", "o"], b2: f32["o"]
        ) -> f32[:, :]:
    """A two-layer perceptron: relu(x @ W1 + b1) @ W2 + b2, 256 x 784 -> 512 -> 10."""
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


@aotc.export
def matvec_f64(a: f64[:, "k"], x: f64["k"]) -> f64[:]:
    """Matrix-vector: memory bandwidth."""
    return a @ x


@aotc.export
def matvec_f32(a: f32[:, "k"], x: f32["k"]) -> f32[:]:
    return a @ x


@aotc.export
def matmul_3d_f32(x: f32[:, :, "d"], w: f32["d", :]) -> f32[:, :, :]:
    """A dense layer over a batch of sequences: x (32 x 64 x 784) @ W (784 x 512)."""
    return x @ w


@aotc.export
def gram_f64(x: f64[:, :]) -> f64[:, :]:
    """A Gram matrix, x @ x.T (256 x 4096): NumPy calls BLAS syrk (half the products)."""
    return x @ x.T


@aotc.export
def laplace_roll(u: f64[:, :]) -> f64[:, :]:
    """A periodic 5-point Laplacian written with np.roll."""
    return np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u


@aotc.export
def fill_last3(x: f64[:], y: f64[:]) -> f64[:, :, :]:
    """The last axis of an (N, N, 3) array filled from broadcasts."""
    n = x.shape[0]
    out = np.empty((n, n, 3))
    out[..., 0] = x[:, None]
    out[..., 1] = y[None, :]
    out[..., 2] = 1.0
    return out


@aotc.export
def tile_rows(a: f64[:], k: i64) -> f64[:, :]:
    return np.tile(a, (k, 1))


@aotc.export
def repeat_each(a: f64[:], k: i64) -> f64[:]:
    return np.repeat(a, k)


# -- linear algebra and FFTs: aotc's loops (small matrices), NumPy's LAPACK and pocketfft ----

@aotc.export
def solve_f64(a: f64[:, :], b: f64[:]) -> f64[:]:
    return np.linalg.solve(a, b)


@aotc.export
def inv_f64(a: f64[:, :]) -> f64[:, :]:
    return np.linalg.inv(a)


@aotc.export
def det_f64(a: f64[:, :]) -> f64:
    return np.linalg.det(a)


@aotc.export
def lstsq_f64(a: f64[:, :], b: f64[:]) -> f64[:]:
    """A least-squares fit: 2000 samples, 8 features (through the SVD)."""
    return np.linalg.lstsq(a, b, rcond=None)[0]


@aotc.export
def svd_values_f64(a: f64[:, :]) -> f64[:]:
    return np.linalg.svd(a, compute_uv=False)


@aotc.export
def eigvalsh_f64(a: f64[:, :]) -> f64[:]:
    return np.linalg.eigvalsh(a)


@aotc.export
def solve_400_f64(a: f64[:, :], b: f64[:]) -> f64[:]:
    """Above order 16: NumPy's own LAPACK loop, called from the kernel."""
    return np.linalg.solve(a, b)


@aotc.export
def eigvalsh_400_f64(a: f64[:, :]) -> f64[:]:
    return np.linalg.eigvalsh(a)


@aotc.export
def small_solves_f64(a: f64[:, 4, 4], b: f64[:, 4]) -> f64[:, :]:
    """10,000 4x4 systems one by one: aotc's in-register LU (NumPy runs the loop)."""
    out = np.empty_like(b)
    for i in range(a.shape[0]):
        out[i] = np.linalg.solve(a[i], b[i])
    return out


@aotc.export
def fft2_c128(x: c128[:, :]) -> c128[:, :]:
    return np.fft.fft2(x)


@aotc.export
def fft_c128(x: c128[:]) -> c128[:]:
    return np.fft.fft(x)


@aotc.export
def rfft_f64(x: f64[:]) -> c128[:]:
    return np.fft.rfft(x)
