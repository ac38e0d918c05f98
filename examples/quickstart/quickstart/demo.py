"""Run every quickstart kernel and print its result next to NumPy's.

    python -m quickstart.demo

Installed from the wheel, ``quickstart.kernels`` is the compiled extension; the NumPy
column is computed here with the same formulas, so the two columns should agree.
"""

from __future__ import annotations

import numpy as np

from quickstart import kernels


def _show(name: str, ours: object, reference: object) -> bool:
    ok = bool(np.allclose(ours, reference, rtol=1e-5, atol=1e-6))
    print(f"{name:<14} {'ok' if ok else 'MISMATCH'}")
    print(f"    aotc : {np.array2string(np.asarray(ours), precision=6)}")
    print(f"    numpy: {np.array2string(np.asarray(reference), precision=6)}")
    return ok


def main() -> int:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(6)
    a32 = rng.standard_normal((3, 4)).astype(np.float32)
    w32 = rng.standard_normal(4).astype(np.float32)
    points = rng.integers(-10, 10, size=(5, 3))

    print(f"quickstart.kernels loaded from {kernels.__file__}")
    results = [
        _show("rosen", kernels.rosen(x),
              np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)),
        _show("scale f64", kernels.scale(x, 2.5), 2.5 * x),
        _show("scale f32", kernels.scale(x.astype(np.float32), 2.5),
              np.float32(2.5) * x.astype(np.float32)),
        _show("row_norms", kernels.row_norms(a32), np.sqrt(np.sum(a32 * a32, axis=1))),
        _show("weighted_rows", kernels.weighted_rows(a32, w32), np.sum(a32 * w32, axis=1)),
        _show("centroid", kernels.centroid(points), np.mean(points, axis=0)),
        _show("mean_std", kernels.mean_std(x), (np.mean(x), np.std(x))),
        _show("rosen (view)", kernels.rosen(x[::2]),
              np.sum(100 * (x[2::2] - x[:-2:2] ** 2) ** 2 + (1 - x[:-2:2]) ** 2)),
    ]
    try:
        kernels.weighted_rows(a32, w32[:3])
    except ValueError as err:
        print(f"mismatched 'm' -> ValueError: {err}")
    try:
        kernels.scale(np.arange(3), 2.0)
    except TypeError as err:
        print("int64 input -> TypeError:\n    " + str(err).replace("\n", "\n    "))
    print("all results agree with NumPy" if all(results) else "SOME RESULTS DIFFER")
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
