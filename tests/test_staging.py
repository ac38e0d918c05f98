"""aotc.jit and the staged form: the build's pipeline in this process, no C compiler."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aotc
from aotc import f32, f64, i64
from aotc.errors import TraceError


@aotc.export("f8[:](f8[:], f8)", "f4[:](f4[:], f4)")
def scale(x, a):
    return a * x


@aotc.export
def stats(x: f64[:]) -> tuple[f64, f64]:
    return np.mean(x), np.std(x)


@aotc.export
def first_positive(x: f64[:]):
    for i in range(x.shape[0]):
        if x[i] > 0:
            return i
    return None


@aotc.export
def parts(x: i64[:]):
    return {"low": x[:2], "rest": [x[2:], np.sum(x)]}


@aotc.export
def smooth(x: f32[:], weight: float = 0.5) -> f32[:]:
    return weight * x[1:] + (1 - weight) * x[:-1]


@aotc.export
def doubled_into(x: f64[:], y: f64[:]):
    for i in range(x.shape[0]):
        y[i] = x[i] * 2.0


@aotc.export
def transposed_into(x: f64[:, :], y: f64[:, :]):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = x[i, j] + x[j, i] * 0.5  # reads y's writes when y is x.T


@aotc.export
def bumped(x: f64[:]):
    x += 1.0


@aotc.export
def inverse(a: f64[:, :]) -> f64[:, :]:
    return np.linalg.inv(a)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AOTC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_jit_gives_what_the_source_gives() -> None:
    x = np.linspace(-2.0, 3.0, 11)
    jitted = aotc.jit(scale)
    np.testing.assert_array_equal(jitted(x, 2.5), scale(x, 2.5))
    as_f32 = jitted(x.astype(np.float32), np.float32(3))
    assert as_f32.dtype == np.float32
    np.testing.assert_array_equal(as_f32, x.astype(np.float32) * np.float32(3))
    mean, std = aotc.jit(stats)(x)
    assert mean == pytest.approx(np.mean(x), rel=1e-15) and std == pytest.approx(np.std(x))
    assert aotc.jit(first_positive)(x) == 5
    assert aotc.jit(first_positive)(-np.abs(x)) is None
    got = aotc.jit(parts)(np.arange(6))
    assert got["low"].tolist() == [0, 1] and got["rest"][0].tolist() == [2, 3, 4, 5]
    assert got["rest"][1] == 15
    y = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(aotc.jit(smooth)(y), smooth(y))
    np.testing.assert_array_equal(aotc.jit(smooth)(x=y), smooth(y))


def test_jit_refuses_what_the_extension_refuses() -> None:
    with pytest.raises(TypeError, match=r"scale\(\): no signature matches") as err:
        aotc.jit(scale)(np.arange(3), 2.0)
    assert "scale(x: f32[:], a: f32) -> f32[:]" in str(err.value)
    with pytest.raises(TypeError, match="a Python function, or a kernel marked"):
        aotc.jit(np.sum)(np.arange(3.0))  # (a ufunc-like builtin: nothing to trace)


def unannotated(a, x, y, scale=2.0):
    """No signature: aotc.jit compiles it for each call's types."""
    return a * x + y * scale


def test_jit_without_signatures_specializes_on_each_call(_cache: Path) -> None:
    fast = aotc.jit(unannotated)
    x32, x64 = np.arange(3, dtype=np.float32), np.arange(3.0)
    calls = [((2.0, x32, x32), {}), ((2.0, x64, np.ones(3)), {}),
             ((np.float64(2.0), x32, x32), {}), ((2, x64, x64), {"scale": 3}),
             ((2.0, x32, x32), {})]  # the first signature again: no new compile
    for args, kwargs in calls:
        got, want = fast(*args, **kwargs), unannotated(*args, **kwargs)
        assert got.dtype == want.dtype  # float32 stays float32 with a Python float
        np.testing.assert_array_equal(got, want)
    assert fast.signatures == ["(float, f4[:], f4[:])", "(float, f8[:], f8[:])",
                               "(f8, f4[:], f4[:])", "(int, f8[:], f8[:], int)"]
    assert fast.exports() == "@aotc.export(" + ", ".join(map(repr, fast.signatures)) + ")"
    assert not hasattr(unannotated, "__aotc_export__")  # the user's function is unmarked
    assert len(list(_cache.glob("*.o"))) == 4  # each signature's object, cached on disk
    with pytest.raises(TypeError, match="argument 'a' of dict"):
        fast({}, x32, x32)

    def shipped(a, x, y, scale=2.0):  # the prototype with the line exports() wrote
        return a * x + y * scale

    exported = aotc.export(*fast.signatures)(shipped)
    np.testing.assert_array_equal(aotc.jit(exported)(2.0, x32, x32), unannotated(2.0, x32, x32))


@aotc.jit
def _element_at(m, ij):
    return m[tuple(ij)]


def test_a_tuple_argument_has_its_length_in_its_type(_cache: Path) -> None:
    """As Numba's UniTuple: tuple(ij) of a 2-tuple is two indices, one element; a list
    of the same items is an array of any length (tuple() of it, as an index, refused)."""
    m = np.arange(20.0).reshape(4, 5)
    assert _element_at(m, (1, 2)) == 7.0 and _element_at(m, (3, 4)) == 19.0
    assert _element_at.signatures == ["(f8[:, :], i8[2])"]
    with pytest.raises(TraceError, match="indexing with a tuple of runtime length"):
        _element_at(m, [1, 2])


@aotc.jit
def _scaled_by_name(x, how):  # a str argument selects, as in SciPy (string_choices)
    if how == "double":
        return x * 2
    return x if how == "same" else -x


def test_jit_without_signatures_takes_strings_that_select(_cache: Path) -> None:
    x = np.arange(3.0)
    for how in ("double", "same", "other"):
        np.testing.assert_array_equal(_scaled_by_name(x, how),
                                      _scaled_by_name.__wrapped__(x, how))
    assert _scaled_by_name.signatures == ["(f8[:], str)"]


@aotc.jit("void(f8[:], f8[:], f8[:])", nopython=True, nogil=True)  # Numba's @jit
def _added_into(result, a, b):
    for i in range(len(result)):
        result[i] = a[i] + b[i]


def test_jit_with_numba_signature_strings(_cache: Path) -> None:
    a, b, out = np.arange(4.0), np.ones(4), np.zeros(4)
    assert _added_into(out, a, b) is None
    np.testing.assert_array_equal(out, a + 1)
    with pytest.raises(TypeError, match="no signature matches"):
        _added_into(out.astype(np.float32), a, b)  # only the signature given compiles
    both = aotc.jit(["f8(f8)", "i8(i8)"])(lambda v: v * 2)
    assert both(3) == 6 and both(1.5) == 3.0
    assert aotc.jit(cache=True, fastmath=True)(lambda v: v + 1)(np.arange(2.0))[1] == 2.0
    numba_style = aotc.jit(parallel=True)(lambda v: v * 3)
    assert numba_style(np.arange(3.0))[2] == 6.0
    assert numba_style._compiled["(f8[:])"].__wrapped__.__aotc_export__.parallel is True
    with pytest.raises(TypeError, match="unexpected keyword argument 'spam'"):
        aotc.jit(spam=True)


@aotc.jit
def _cnd(d):  # numba's Black-Scholes: one @njit function calling another
    return 0.5 * (1.0 + np.tanh(d))


@aotc.jit
def _priced(x):
    return _cnd(x) * 2.0 - _cnd(-x)


def test_a_jit_function_calls_another_inlined(_cache: Path) -> None:
    x = np.linspace(-2.0, 2.0, 5)
    got = _priced(x)
    assert _cnd.signatures == []  # inlined into the caller: never compiled on its own
    assert _cnd.py_func(0.0) == 0.5  # the Python function, as Numba's dispatchers name it
    want = 0.5 * (1.0 + np.tanh(x)) * 2.0 - 0.5 * (1.0 + np.tanh(-x))
    np.testing.assert_allclose(got, want, rtol=1e-14)  # tanh: a few ulps of NumPy's


def test_jit_checks_arguments_as_the_extension_does() -> None:
    """Writes into read-only or self-overlapping arrays and reads after writes into an
    overlapping argument are ValueErrors naming the parameters (silently different
    answers otherwise); byte-swapped arrays are converted and written back."""
    a = np.arange(1.0, 9.0)
    with pytest.raises(ValueError, match="parameters 'y' and 'x' share memory"):
        aotc.jit(doubled_into)(a[:-1], a[1:])
    assert a.tolist() == list(np.arange(1.0, 9.0))  # refused before any write
    x, y = np.arange(3.0), np.zeros(3)
    aotc.jit(doubled_into)(x, y)  # disjoint: fine
    assert y.tolist() == [0.0, 2.0, 4.0]
    m = np.arange(9.0).reshape(3, 3)
    aotc.jit(doubled_into)(x, x)  # one array twice: the alias twin, as Python computes
    assert x.tolist() == [0.0, 2.0, 4.0]
    aotc.jit(transposed_into)(m, m.T)  # an array and its transpose: its alias twin
    want = np.arange(9.0).reshape(3, 3)
    transposed_into.__wrapped__(want, want.T)
    np.testing.assert_array_equal(m, want)
    frozen = np.ones(3)
    frozen.flags.writeable = False
    for bad in (frozen, np.broadcast_to(np.ones(1), (3,))):
        with pytest.raises(ValueError, match=r"read-only \(parameter 'x'\)"):
            aotc.jit(bumped)(bad)
    strided = np.lib.stride_tricks.as_strided(np.zeros(4), (3,), (0,), writeable=True)
    with pytest.raises(ValueError, match="'x' has elements that share memory"):
        aotc.jit(bumped)(strided)
    swapped = np.arange(4.0).astype(">f8")
    aotc.jit(bumped)(swapped)
    assert swapped.dtype == np.dtype(">f8") and swapped.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_a_singular_matrix_raises_numpys_error() -> None:
    for call in (aotc.jit(inverse), np.linalg.inv):
        with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
            call(np.zeros((2, 2)))


def test_jit_caches_object_code_on_disk(_cache: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    x = np.arange(4.0)
    assert aotc.jit(stats)(x)[0] == 1.5
    assert len(list(_cache.glob("*.o"))) == 1

    def no_compile(*args: object) -> bytes:
        raise AssertionError("compiled again")

    monkeypatch.setattr("aotc.codegen.core.module.object_from_text", no_compile)
    assert aotc.jit(stats)(x)[0] == 1.5  # a fresh jit object: the object comes from disk


@pytest.mark.parametrize("damage", [b"", b"\x7fELF\x02\x01", b"random bytes" * 40, None])
def test_a_damaged_cached_object_is_compiled_again(_cache: Path, damage: bytes | None) -> None:
    # Truncated, empty, random, or half of a real object: each used to fail every later
    # process in LLVM's loader ("section header table goes past the end of the file").
    x = np.arange(4.0)
    assert aotc.jit(stats)(x)[0] == 1.5
    (stored,) = _cache.glob("*.o")
    good = stored.read_bytes()
    stored.write_bytes(good[:len(good) // 2] if damage is None else damage)
    assert aotc.jit(stats)(x)[0] == 1.5  # a fresh jit: the damage is found and compiled anew
    assert stored.read_bytes() == good
    stored.with_suffix(".sha256").unlink()  # no digest (a writer killed between the two)
    assert aotc.jit(stats)(x)[0] == 1.5
    assert stored.with_suffix(".sha256").is_file()


def test_the_cache_is_bounded_and_clears(_cache: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    import os

    from aotc import cli
    from aotc.packaging import object_cache

    for k in range(5):  # five old objects of 1 MiB, the first used most recently
        object_cache.store(f"old{k}", bytes(1 << 20))
        os.utime(_cache / f"old{k}.o", (1000 + k, 1000 + k))
    assert object_cache.load("old0") is not None  # a load refreshes its time
    monkeypatch.setenv("AOTC_CACHE_MAX_MB", "3.5")
    aotc.jit(stats)(np.arange(3.0))  # a store prunes the least recently used
    assert sorted(p.stem for p in _cache.glob("*.o") if p.stem.startswith("old")) == \
        ["old0", "old3", "old4"]
    assert cli.main(["cache", "info"]) == 0
    assert "4 objects" in capsys.readouterr().out
    assert cli.main(["cache", "clear"]) == 0
    assert "removed 4 objects" in capsys.readouterr().out
    assert list(_cache.iterdir()) == []


def test_the_target_is_the_default_wheels_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    assert aotc.jit(scale).target in ("x86-64-v2", "x86-64-v3", "x86-64-v4")
    monkeypatch.setenv("AOTC_CPU", "x86-64-v2")
    jitted = aotc.jit(scale)
    assert jitted.target == "x86-64-v2"
    np.testing.assert_array_equal(jitted(np.ones(3), 2.0), np.full(3, 2.0))


def test_staged_stages_show_their_ir_and_compile() -> None:
    traced = aotc.trace(stats, "(f8, f8)(f8[:])")
    assert "reduce_sum" in str(traced) or "sum" in str(traced)
    optimized = traced.optimize()
    assert "fusion" in str(optimized)
    lowered = optimized.lower("x86-64-v3")
    text = lowered.as_text()
    assert "define" in text and "_shapes" in text
    kernel = lowered.compile()
    vectorized = aotc.trace(scale, "f8[:](f8[:], f8)").optimize().lower("x86-64-v3")
    assert "<4 x double>" in vectorized.as_text(optimized=True)  # the target's AVX2 vectors
    np.testing.assert_array_equal(vectorized.compile()(np.arange(5.0), 2.0),
                                  np.arange(5.0) * 2.0)
    x = np.array([1.0, 2.0, 4.0, 9.0])
    mean, std = kernel(x)
    assert mean == 4.0 and std == pytest.approx(np.std(x), rel=1e-15)
    with pytest.raises(TypeError, match="no signature matches"):
        kernel(np.arange(3))


def test_trace_without_a_signature_needs_an_export() -> None:
    assert "fusion" in str(aotc.trace(stats).optimize())
    with pytest.raises(TypeError, match="give a signature"):
        aotc.trace(lambda x: x)
