"""vmap: batched kernels against a Python loop of unbatched calls, compiled and not."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import aotc
from aotc.packaging.build import exported_functions
from aotc.transforms import TransformError

from . import kernels as K
from .harness import compile_all, interpreted, program_of, results

rng = np.random.default_rng(12)


def loop(fn: Any, in_axes: tuple[int | None, ...], args: tuple[Any, ...],
         out_axis: int = 0) -> list[np.ndarray]:
    """The reference: call the unbatched kernel lane by lane and stack."""
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes, strict=True) if ax is not None)
    lanes = []
    for i in range(n):
        lane = [a if ax is None else np.take(a, i, axis=ax)
                for a, ax in zip(args, in_axes, strict=True)]
        lanes.append(results(fn(*lane)))
    return [np.stack(col, axis=out_axis) for col in zip(*lanes, strict=True)]


def nested_pairwise(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    return [np.array([[K.sqdist(a, b) for b in y] for a in x])]


CASES: list[tuple[str, Any, tuple[Any, ...], Any]] = [
    ("selu", aotc.vmap(K.selu), (rng.normal(size=9),), None),
    ("rosen", aotc.vmap(K.rosen), (rng.normal(size=(5, 7)),), None),
    ("rosen_axis1", aotc.vmap(K.rosen, in_axes=1), (rng.normal(size=(7, 4)),), None),
    ("matvec_x", aotc.vmap(K.matvec, in_axes=(None, 0)),
     (rng.normal(size=(3, 4)), rng.normal(size=(6, 4))), None),
    ("matvec_a", aotc.vmap(K.matvec, in_axes=(0, None)),
     (rng.normal(size=(5, 3, 4)), rng.normal(size=4)), None),
    ("matvec_both", aotc.vmap(K.matvec), (rng.normal(size=(5, 3, 4)), rng.normal(size=(5, 4))),
     None),
    ("matvec_out1", aotc.vmap(K.matvec, in_axes=(None, 0), out_axes=1),
     (rng.normal(size=(3, 4)), rng.normal(size=(6, 4))), 1),
    ("pairwise", K.pairwise, (rng.normal(size=(4, 3)), rng.normal(size=(6, 3))), "pairwise"),
    ("normalize", aotc.vmap(K.normalize), (rng.normal(size=(4, 8)),), None),
    ("newton", aotc.vmap(K.newton_sqrt), (rng.uniform(0.0, 1e4, size=11),), None),
    ("collatz", aotc.vmap(K.collatz), (np.arange(1, 40, dtype=np.int64),), None),
    ("piecewise", aotc.vmap(K.piecewise), (rng.normal(size=10),), None),
    ("horner_x", aotc.vmap(K.horner, in_axes=(None, 0)),
     (rng.normal(size=5), rng.normal(size=8)), None),
    ("horner_c", aotc.vmap(K.horner, in_axes=(0, None)),
     (rng.normal(size=(6, 5)), 0.7), None),
    ("ema", aotc.vmap(K.ema), (rng.normal(size=(3, 9)), rng.uniform(0, 1, size=3)), None),
    ("ema_x", aotc.vmap(K.ema, in_axes=(0, None)), (rng.normal(size=(3, 9)), 0.3), None),
    ("gather_both", aotc.vmap(K.gather),
     (rng.normal(size=(4, 6)), rng.integers(-6, 6, size=(4, 3))), None),
    ("gather_x", aotc.vmap(K.gather, in_axes=(0, None)),
     (rng.normal(size=(4, 6)), np.array([5, 0, -1])), None),
    ("gather_i", aotc.vmap(K.gather, in_axes=(None, 0)),
     (rng.normal(size=6), rng.integers(0, 6, size=(4, 3))), None),
]


@pytest.fixture(scope="module")
def compiled() -> dict[str, Any]:
    return dict(zip([c[0] for c in CASES], compile_all([c[1] for c in CASES]), strict=True))


def reference(name: str, t: Any, args: tuple[Any, ...], how: Any) -> list[np.ndarray]:
    if how == "pairwise":
        return nested_pairwise(*args)
    spec = t.in_axes if isinstance(t.in_axes, tuple) else (t.in_axes,) * len(args)
    axes = tuple(None if a is None else a % np.ndim(x) for a, x in zip(spec, args, strict=True))
    return loop(t.fn, axes, args, out_axis=how or 0)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_batched_matches_a_loop(case: Any, compiled: dict[str, Any]) -> None:
    name, t, args, how = case
    want = reference(name, t, args, how)
    for got in (compiled[name](*args), interpreted(t, *args), results(t(*args))):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_batched_program_is_fused_not_a_loop() -> None:
    from aotc.passes import optimize
    program = optimize(program_of(aotc.vmap(K.rosen)))
    assert [e.prim.name for e in program.eqns] == ["fusion"]


def test_batched_while_runs_until_every_lane_is_done() -> None:
    program = program_of(aotc.vmap(K.collatz))
    (loop_eqn,) = [e for e in program.eqns if e.prim.name == "while_loop"]
    assert [e.prim.name for e in loop_eqn.params["cond"].eqns][-1] == "reduce_or"


def test_writes_into_a_batched_argument(compiled: dict[str, Any]) -> None:
    t = aotc.vmap(K.scale_into)
    (kernel,) = compile_all([t])
    for run in (kernel, t):
        x, a = rng.normal(size=(3, 4)), rng.normal(size=3)
        want = x * a[:, None]
        run(x, a)
        np.testing.assert_allclose(x, want)


def test_mismatched_batch_sizes_raise(compiled: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="size 4"):
        compiled["matvec_both"](rng.normal(size=(5, 3, 4)), rng.normal(size=(4, 4)))
    with pytest.raises(ValueError, match="batch size"):
        aotc.vmap(K.matvec)(rng.normal(size=(5, 3, 4)), rng.normal(size=(4, 4)))


def test_signatures_gain_a_named_batch_dimension() -> None:
    (sig,) = K.pairwise.__aotc_export__.signatures
    assert str(sig) == "f64['batch2', 'batch'](f64['batch2', 'd'], f64['batch', 'd'])"
    (sig,) = aotc.vmap(K.matvec, in_axes=(None, 0), axis_name="rows").signatures()
    assert str(sig) == "f64['rows', 'n'](f64['n', 'm'], f64['rows', 'm'])"


def test_build_discovers_exported_transforms() -> None:
    names = dict(exported_functions(K))
    assert {"selu_batch", "rosen_batch", "matvec_batch", "pairwise"} <= names.keys()
    assert names["rosen_batch"] is K.rosen_batch  # bound in the module by export(name=)
    assert names["rosen_batch"].__name__ == "rosen_batch"


def test_lanes_of_their_own_lengths_are_a_located_error() -> None:
    with pytest.raises(TransformError, match="'bind_dim' has no batching rule") as info:
        program_of(aotc.vmap(K.positives))  # each lane would have its own length
    assert info.value.kernel == "vmap_positives"


def test_a_primitive_without_rule_loops_over_the_lanes() -> None:
    """searchsorted has no batching rule: the vmapped kernel runs the lanes one by one,
    as the uncompiled vmap does (transforms/lanes.py), with the same results."""
    batched = aotc.vmap(K.bucket)
    compiled = aotc.jit(aotc.export(batched, name="bucket_lanes"))
    edges = np.array([[0.0, 1.0, 2.0], [10.0, 20.0, 30.0]])
    values = np.array([[0.5, 2.5, -1.0, 1.0], [15.0, 35.0, 5.0, 20.0]])
    np.testing.assert_array_equal(compiled(edges, values), batched(edges, values))


def test_batched_size_argument_is_an_error() -> None:
    with pytest.raises(TransformError, match="argument 'k' is a size"):
        program_of(aotc.vmap(K.ones, in_axes=(0, 0)))


def test_in_axes_must_batch_something() -> None:
    with pytest.raises(TransformError, match="at least one"):
        aotc.vmap(K.rosen, in_axes=None).signatures()


def test_every_primitive_has_a_batching_rule_or_a_reason() -> None:
    """A primitive is batchable, or takes no inputs (never batched), or says why not."""
    from aotc.ops.core import ALL_PRIMITIVES
    from aotc.transforms.batching import NO_RULE_HINTS, batch_rules
    no_inputs = {"iota", "dim_value", "check", "clock"}
    before_fusion = {"fusion"}  # vmap runs on traced programs, before the optimizer
    missing = {name for name, p in ALL_PRIMITIVES.items() if p not in batch_rules}
    assert missing == no_inputs | before_fusion | NO_RULE_HINTS.keys()
