"""Kernel signatures: dtypes, array types, and the two ways to write them.

A kernel author writes either annotations (``x: f64["n"]``) or Numba-style strings
(``"f8[:](f8[:], f8)"``). Both parse into the same :class:`Signature`, so everything
downstream (tracing, the wrapper's argument checks) sees one representation.
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .errors import SignatureError

#: A dimension in a signature: ``None`` is fresh (``:``), an int is fixed, a str is a
#: name shared by every parameter that uses it.
DimSpec = int | str | None


@dataclass(frozen=True)
class ArrayType:
    """The declared type of one parameter or result; rank 0 means a scalar."""

    dtype: np.dtype
    dims: tuple[DimSpec, ...] = ()
    #: A scalar annotated with a Python type (``float``, ``int``, ``bool``) is weak, as a
    #: Python scalar is in NumPy 2 (NEP 50) and in JAX: ``x_f32 * a`` stays float32.
    weak: bool = False
    #: A weak scalar whose overload has a strong twin next (aotc.packaging.weak_scalars): a NumPy
    #: scalar of 8-byte components passed for it goes to the twin.
    defers_wide: bool = False

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def is_scalar(self) -> bool:
        return not self.dims

    @property
    def is_str(self) -> bool:
        """A ``str`` parameter (:data:`STR`)."""
        return self.dtype.kind == "U"

    def __str__(self) -> str:
        if self.is_str:
            return "str"
        name = SHORT_NAMES[self.dtype]
        if self.is_scalar:
            return _PYTHON_NAMES[self.dtype.kind] if self.weak else name
        return f"{name}[{', '.join(_dim_text(d) for d in self.dims)}]"


#: A ``str`` parameter: compiled once per string its module compares it with
#: (:mod:`aotc.packaging.string_choices`), never a value that crosses the C boundary.
STR = ArrayType(np.dtype("U"))


def _dim_text(dim: DimSpec) -> str:
    return ":" if dim is None else repr(dim) if isinstance(dim, str) else str(dim)


class DTypeAnnotation:
    """``f64`` and friends: a scalar type that subscripts into an array type."""

    def __init__(self, name: str, dtype: DTypeLike) -> None:
        self.name = name
        self.dtype = np.dtype(dtype)

    def __getitem__(self, dims: Any) -> ArrayType:
        if not isinstance(dims, tuple):
            dims = (dims,)
        return ArrayType(self.dtype, tuple(_dim_from_subscript(d) for d in dims))

    def __repr__(self) -> str:
        return self.name

    # Lets the annotation object itself act as the scalar type.
    @property
    def array_type(self) -> ArrayType:
        return ArrayType(self.dtype)


def _dim_from_subscript(dim: Any) -> DimSpec:
    if isinstance(dim, slice) and dim == slice(None):
        return None
    if isinstance(dim, slice) and dim.start is None and dim.stop is None and dim.step == 1:
        return None  # ``::1``, Numba's contiguous marker; layout is not part of the type
    if isinstance(dim, bool):
        raise SignatureError(f"dimension {dim!r} is not a size")
    if isinstance(dim, int):
        if dim < 0:
            raise SignatureError(f"fixed dimension {dim} is negative")
        return dim
    if isinstance(dim, str) and dim.isidentifier():
        return dim
    raise SignatureError(
        f"dimension {dim!r} is not understood: write ':' for any size, an int for a fixed "
        "size, or a name such as 'n' for a size shared between parameters"
    )


_LONG_NAMES = {
    "bool_": "?", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8",
    "uint8": "u1", "uint16": "u2", "uint32": "u4", "uint64": "u8",
    "float32": "f4", "float64": "f8", "complex64": "c8", "complex128": "c16",
}
SHORT_NAMES: dict[np.dtype, str] = {
    np.dtype(code): name
    for name, code in {
        "bool_": "?", "i8": "i1", "i16": "i2", "i32": "i4", "i64": "i8",
        "u8": "u1", "u16": "u2", "u32": "u4", "u64": "u8",
        "f32": "f4", "f64": "f8", "c64": "c8", "c128": "c16",
    }.items()
}

bool_ = DTypeAnnotation("bool_", np.bool_)
i8, i16, i32, i64 = (DTypeAnnotation(n, c) for n, c in
                     [("i8", "i1"), ("i16", "i2"), ("i32", "i4"), ("i64", "i8")])
u8, u16, u32, u64 = (DTypeAnnotation(n, c) for n, c in
                     [("u8", "u1"), ("u16", "u2"), ("u32", "u4"), ("u64", "u8")])
f32, f64 = DTypeAnnotation("f32", "f4"), DTypeAnnotation("f64", "f8")
c64, c128 = DTypeAnnotation("c64", "c8"), DTypeAnnotation("c128", "c16")

# Names accepted in signature strings: Numba's short codes, the long NumPy names, ours.
_STRING_DTYPES: dict[str, np.dtype] = {
    **{name: np.dtype(code) for name, code in _LONG_NAMES.items()},
    **{name: np.dtype(code) for name, code in
       {"b1": "?", "boolean": "?", "bool": "?", "i1": "i1", "i2": "i2", "i4": "i4", "i8": "i8",
        "u1": "u1", "u2": "u2", "u4": "u4", "u8": "u8", "f4": "f4", "f8": "f8",
        "c8": "c8", "c16": "c16", "intp": "i8", "float": "f8", "int": "i8",
        "double": "f8", "single": "f4", "complex": "c16"}.items()},
}
#: Names that mean a Python scalar in a signature string (and how a weak one prints).
_PYTHON_NAMES = {"f": "float", "i": "int", "c": "complex", "b": "bool"}
_PYTHON_SCALARS = frozenset(_PYTHON_NAMES.values())
_OUR_NAMES = {a.name: a.dtype for a in (bool_, i8, i16, i32, i64, u8, u16, u32, u64,
                                         f32, f64, c64, c128)}


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's real and imaginary parts (float64 for complex128,
    as ``z.real`` has); any other dtype is its own."""
    dtype = np.dtype(dtype)
    return np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are of float dtype ``dtype`` (complex64 for float32)."""
    return np.dtype(f"c{2 * np.dtype(dtype).itemsize}")


@dataclass(frozen=True)
class Signature:
    """Parameter types in order and, if declared, the result types."""

    params: tuple[ArrayType, ...]
    results: tuple[ArrayType, ...] | None = None
    #: True when the declared result is a tuple (even of one element).
    returns_tuple: bool = False
    #: Traced with broadcasting decided at run time, as NumPy does it: a size that is 1
    #: stretches where the plain trace took two sizes to be equal
    #: (:mod:`aotc.packaging.broadcast_twins`). Not part of the signature's text.
    stretches: bool = False
    #: Traced with one array parameter *being* another, ``(first, second, transposed)``:
    #: parameter ``second`` is parameter ``first`` (its ``.T`` when ``transposed``), as
    #: when a caller passes one array twice (:mod:`aotc.packaging.alias_twins`). Not
    #: part of the signature's text.
    aliases: tuple[int, int, bool] | None = None

    @property
    def fallback(self) -> bool:
        """Whether this is a twin the call path runs instead of the overload before it
        (a broadcast or alias twin): compiled for the baseline target only."""
        return self.stretches or self.aliases is not None

    def __str__(self) -> str:
        args = ", ".join(str(p) for p in self.params)
        if self.results is None:
            return f"({args})"
        if self.returns_tuple:
            return f"({', '.join(str(r) for r in self.results)})({args})"
        if not self.results:
            return f"void({args})"
        return f"{self.results[0]}({args})"


def annotation_to_type(annotation: Any) -> ArrayType:
    """Turn one annotation object into an :class:`ArrayType`."""
    if isinstance(annotation, ArrayType):
        return annotation
    if isinstance(annotation, DTypeAnnotation):
        return annotation.array_type
    if annotation is str:
        return STR
    python_types = {float: "f8", bool: "?", int: "i8", complex: "c16"}
    if annotation in python_types:
        return ArrayType(np.dtype(python_types[annotation]), (), weak=True)
    if isinstance(annotation, str):
        return parse_type_string(annotation)
    raise SignatureError(
        f"annotation {annotation!r} is not a kernel type: use f64, i64, bool_, float, int, "
        "or an array type such as f64[:] or f32['n', 'm']"
    )


def signature_from_annotations(fn: Any) -> Signature:
    """Read a signature from ``fn``'s annotations; defaults mark build-time constants.

    String annotations (``from __future__ import annotations``) are evaluated in the
    function's module, as ``typing.get_type_hints`` does.
    """
    try:
        sig = inspect.signature(fn, eval_str=True)
    except Exception:  # an unresolvable name: parse the strings as signature types
        sig = inspect.signature(fn)
    params = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise SignatureError(f"parameter '{p.name}': *args and **kwargs cannot be compiled")
        if p.annotation is inspect.Parameter.empty:
            if p.default is not inspect.Parameter.empty:
                continue  # a build-time constant
            raise SignatureError(
                f"parameter '{p.name}' has no type: annotate it (for example "
                f"'{p.name}: f64[:]') or pass signature strings to @aotc.export"
            )
        params.append(annotation_to_type(p.annotation))
    if sig.return_annotation is inspect.Signature.empty:
        return Signature(tuple(params))
    ret = sig.return_annotation
    if ret is None or ret is type(None) or ret == "None":
        return Signature(tuple(params), ())  # the kernel only writes into its arguments
    if _untyped(ret):
        return Signature(tuple(params))  # a bare annotation users write: whatever it returns
    if typing.get_origin(ret) is tuple:  # tuple[f64[:], f64]
        ret = typing.get_args(ret)
    if isinstance(ret, tuple):
        if any(_untyped(r) or r is Ellipsis for r in ret):  # tuple[str, int]
            return Signature(tuple(params))
        return Signature(tuple(params), tuple(annotation_to_type(r) for r in ret), True)
    return Signature(tuple(params), (annotation_to_type(ret),))


def _untyped(annotation: Any) -> bool:
    """A result annotation that says what Python type, not which array: ``str``,
    ``list[int]``, ``dict``, ``Any`` (the result is then whatever the kernel returns)."""
    bare = (tuple, list, dict, set, str, object, typing.Any, typing.Tuple)  # noqa: UP006
    return any(annotation is b for b in bare) or \
        typing.get_origin(annotation) in (list, dict, set, frozenset)


# -- Numba-style strings ---------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_]\w*)|(?P<int>\d+)|(?P<punct>::|[\[\](),:]))")


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[str] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m:
                raise SignatureError(f"cannot read signature {text!r} at {text[pos:]!r}")
            assert m.lastgroup is not None  # every alternative is a named group
            self.items.append(m.group(m.lastgroup))
            pos = m.end()
        self.pos = 0

    def peek(self) -> str | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            want = f"'{expected}'" if expected else "more"
            raise SignatureError(f"signature {self.text!r}: expected {want}, found {tok!r}")
        self.pos += 1
        return tok


def _parse_type(tokens: _Tokens) -> ArrayType:
    name = tokens.take()
    if name == "str" and tokens.peek() != "[":
        return STR
    dtype = _STRING_DTYPES.get(name) or _OUR_NAMES.get(name)
    if dtype is None:
        raise SignatureError(
            f"signature {tokens.text!r}: unknown type {name!r}; use f8, f4, i8, i4, u1, b1, "
            "c16 or the long names float64, int32, …"
        )
    if tokens.peek() != "[":
        # ``float``, ``int``, ``complex``, ``bool``: a Python scalar, weak as its
        # annotation is (Pythran's meaning); ``f8``, ``float64``, ``double``: NumPy's.
        return ArrayType(np.dtype(dtype), weak=name in _PYTHON_SCALARS)
    tokens.take("[")
    dims: list[DimSpec] = []
    while True:
        tok = tokens.take()
        if tok == ":":
            dims.append(None)
        elif tok == "::":
            tokens.take("1")
            dims.append(None)
        elif tok.isdigit():
            dims.append(int(tok))
        elif tok.isidentifier():
            dims.append(tok)
        else:
            raise SignatureError(f"signature {tokens.text!r}: bad dimension {tok!r}")
        if tokens.peek() == ":" and dims[-1] is None:  # ':' followed by ':1' forms '::1'
            tokens.take(":")
            tokens.take("1")
        sep = tokens.take()
        if sep == "]":
            return ArrayType(np.dtype(dtype), tuple(dims))
        if sep != ",":
            raise SignatureError(f"signature {tokens.text!r}: expected ',' or ']', found {sep!r}")


def _parse_type_list(tokens: _Tokens, close: str = ")") -> list[ArrayType]:
    types: list[ArrayType] = []
    if tokens.peek() == close:
        tokens.take(close)
        return types
    while True:
        types.append(_parse_type(tokens))
        sep = tokens.take()
        if sep == "," and tokens.peek() == close:  # a trailing comma, as Python allows
            sep = tokens.take()
        if sep == close:
            return types
        if sep != ",":
            raise SignatureError(f"signature {tokens.text!r}: expected ',' or '{close}'")


def parse_type_string(text: str) -> ArrayType:
    """Parse one type such as ``"f8[:, :]"`` or ``"float32"``."""
    tokens = _Tokens(text)
    result = _parse_type(tokens)
    if tokens.peek() is not None:
        raise SignatureError(f"type {text!r}: unexpected {tokens.peek()!r}")
    return result


def parse_signature_string(text: str) -> Signature:
    """Parse ``"f8[:](f8[:], f8)"``, ``"void(f8[:])"``, ``"(f8, f8)(f8[:])"`` or ``"(f8[:])"``."""
    tokens = _Tokens(text)
    results: tuple[ArrayType, ...] | None
    returns_tuple = False
    first = tokens.peek()
    if first == "(":
        tokens.take("(")
        types = _parse_type_list(tokens)
        if tokens.peek() == "(":  # a tuple return type came first
            tokens.take("(")
            results, returns_tuple = tuple(types), True
            params = _parse_type_list(tokens)
        else:
            results, params = None, types
    elif first in ("Tuple", "UniTuple"):
        raise SignatureError(
            f"signature {text!r}: write a tuple result as '(f8[:], f8)(args)'"
        )
    elif first == "void":
        tokens.take()
        tokens.take("(")
        results, params = (), _parse_type_list(tokens)
    else:
        results = (_parse_type(tokens),)
        tokens.take("(")
        params = _parse_type_list(tokens)
    if tokens.peek() is not None:
        raise SignatureError(f"signature {text!r}: unexpected {tokens.peek()!r} at the end")
    if results is not None:  # a result is what it is: weak describes how an argument mixes
        results = tuple(ArrayType(r.dtype, r.dims) for r in results)
    return Signature(tuple(params), results, returns_tuple)
