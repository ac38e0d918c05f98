"""Symbolic dimensions: canonical forms, evaluation, broadcasting."""

import itertools

import pytest

from aotc.shapes import DimExpr, broadcast_shapes, ceil_div, exact_div, maximum, minimum, relu

n, m = DimExpr.sym("n"), DimExpr.sym("m")


def test_slices_of_the_same_length_are_equal():
    # len(x[1:]) = n - min(1, n); len(x[:-1]) = relu(n - 1): the same canonical form.
    assert n - minimum(1, n) == relu(n - 1)
    assert str(relu(n - 1)) == "relu(n - 1)"


def test_relu_simplifies_provable_signs():
    assert relu(n + 2) == n + 2
    assert relu(-n - 1) == DimExpr.const(0)
    assert relu(DimExpr.const(-3)) == DimExpr.const(0)
    assert relu(1 - n) == relu(n - 1) - (n - 1)


@pytest.mark.parametrize("nv,mv", list(itertools.product(range(0, 5), range(0, 5))))
def test_max_min_ceil_div_evaluate_like_python(nv, mv):
    env = {"n": nv, "m": mv}
    assert maximum(n, m).evaluate(env) == max(nv, mv)
    assert minimum(n - 2, m).evaluate(env) == min(nv - 2, mv)
    assert ceil_div(n + m, 3).evaluate(env) == -(-(nv + mv) // 3)
    assert ((n * m + n) // 2).evaluate(env) == (nv * mv + nv) // 2


def test_polynomial_arithmetic_is_canonical():
    assert (n + 1) * (m + 1) == n * m + n + m + 1
    assert (n * 4 + 2) // 2 == n * 2 + 1
    assert exact_div(n * m + n * 3, n) == m + 3
    assert exact_div(n * m, m + 1) is None


def test_broadcasting_symbolic_shapes():
    shape, checks = broadcast_shapes((n, DimExpr.const(1)), (DimExpr.const(3),))
    assert shape == (n, DimExpr.const(3)) and checks == []
    shape, checks = broadcast_shapes((n,), (m,))
    assert shape == (n,) and len(checks) == 1
    with pytest.raises(ValueError, match="could not be broadcast"):
        broadcast_shapes((DimExpr.const(2),), (DimExpr.const(3),))


def test_upper_bounds_of_sizes_bound_while_running_hold_for_every_value():
    """``upper_bound`` is sound: for every value of the bound symbols in [0, upper], the
    expression is at most the bound (checked exhaustively on small sizes)."""
    from aotc.shapes import ceil_div, if_neg, maximum, minimum, upper_bound

    n, k = DimExpr.sym("n"), DimExpr.sym("k", signed=True)
    a, b = DimExpr.sym("@a"), DimExpr.sym("@b")
    uppers = {"@a": n, "@b": n - 1}
    exprs = [a, relu(a - 1), a + b, 3 * a, n - a, relu(n - a), minimum(a, 5), ceil_div(a, 2),
             a * b, if_neg(k, a, b), maximum(a - b, 2), relu(a - b) * n, (a + k) // 3 - k // 3]
    for expr in exprs:
        bound = upper_bound(expr, uppers)
        assert bound is not None and not bound.symbols() & {"@a", "@b"}, expr
        for nv in range(1, 6):
            for kv in (-3, 0, 4):
                for av in range(nv + 1):
                    for bv in range(nv):
                        env = {"n": nv, "k": kv, "@a": av, "@b": bv}
                        assert expr.evaluate(env) <= bound.evaluate(env), (expr, env)
    assert upper_bound(a * k, uppers) is None  # the sign of k is unknown: no bound
