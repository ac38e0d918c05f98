"""``str`` parameters that select (aotc.packaging.string_choices): which strings get a
compiled function, and ``aotc.jit`` of such kernels against the same source as Python
(the built module is compared in test_python_constructs)."""

from __future__ import annotations

import constructs_kernels as kernels
import numpy as np
import pytest

import aotc
from aotc.errors import SignatureError
from aotc.packaging.string_choices import STAND_IN, bound_variants, choices, string_position
from aotc.types import parse_signature_string

X = np.array([1.5, -2.0, 3.25, 0.5])


def test_the_strings_compared_with_or_looked_up_by_the_parameter() -> None:
    assert choices(kernels.named_kernel, 1).values == ("linear", "cubic")
    assert choices(kernels.chosen_method, 1).values == ("separate", "hierarchical")
    assert [v for v, _ in bound_variants(kernels.chosen_method, choices(
        kernels.chosen_method, 1))] == ["separate", "hierarchical", STAND_IN]


def test_one_str_parameter_at_one_place() -> None:
    sigs = [parse_signature_string(s) for s in ("(f8[:], str)", "(str, f8[:])")]
    with pytest.raises(SignatureError, match="at most one str parameter"):
        string_position(sigs)
    assert string_position(sigs[:1]) == 1
    assert string_position([parse_signature_string("(f8[:], f8)")]) is None


def _outcome(fn: object, *args: object, **kwargs: object) -> object:
    try:
        return fn(*args, **kwargs)  # type: ignore[operator]
    except Exception as err:
        return type(err), str(err)


@pytest.mark.parametrize(("name", "args", "kwargs"), [
    ("named_kernel", (X, "linear"), {}),
    ("named_kernel", (X.astype(np.float32),), {"kernel": "cubic"}),
    ("named_kernel", (X, "quintic"), {}),  # Python's KeyError, naming the string
    ("named_kernel", (X, b"linear"), {}),  # not a str: a TypeError
    ("chosen_method", (X, "separate"), {"scale": 3.0}),
    ("chosen_method", (X, "hierarchical", 2.0), {}),
    ("chosen_method", (X, "no such method"), {}),  # the source's ValueError, with it
])
def test_jit_matches_python(name: str, args: tuple[object, ...],
                            kwargs: dict[str, object]) -> None:
    source = getattr(kernels, name)
    want, got = _outcome(source, *args, **kwargs), _outcome(aotc.jit(source), *args, **kwargs)
    if isinstance(want, tuple):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6)  # float32 rounding in the f32 case
        assert np.asarray(got).dtype == np.asarray(want).dtype


def _labelled(label: str, x: np.ndarray) -> tuple[str, float]:
    if label == "sum":
        return "total " + label, x.sum()
    return label * 2 + "?", x.max()


def _shouted(label: str) -> str:
    return label.upper()


def test_strings_made_from_the_parameter_hold_the_string_passed() -> None:
    """``label * 2 + "?"`` of a string the kernel never compares with: the function
    compiled for other strings returns the text it was traced with, which the call
    replaces by the string passed (it was returned as it was: a wrong answer)."""
    compiled = aotc.jit(aotc.export("(str, f64[:])")(_labelled))
    for label in ("sum", "ab", ""):
        got, want = compiled(label, X), _labelled(label, X)
        assert got[0] == want[0] and got[1] == want[1]


def test_reading_the_text_of_the_parameter_is_a_value_error_naming_why() -> None:
    """``label.upper()`` of another string cannot be known where the kernel is compiled:
    a ValueError naming the method, never the stand-in's text upper-cased."""
    compiled = aotc.jit(aotc.export("(str,)")(_shouted))
    with pytest.raises(ValueError, match=r"label='abc' was not compiled: .*reads the text of "
                                         r"a str parameter \(str\.upper\)"):
        compiled("abc")
