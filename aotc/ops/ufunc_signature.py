"""Generalized-ufunc core signatures: ``"(n),(n)->()"`` parsed, and matched to a kernel.

``@aotc.export(gufunc="(n),(n)->()")`` declares how NumPy should see a kernel: each
operand's *core* dimensions, which the kernel handles, while NumPy loops and broadcasts
over the rest. The kernel's own types must agree with that (one parameter per input,
of the core rank; scalars for ``()``), which is checked when the decorator runs, so a
mismatch is an error at import, uncompiled or not. ``ufunc=True`` is the elementwise
case: every operand ``()``, and NumPy's ufunc has no signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..types import ArrayType, Signature

_DIM = r"\s*(?:[A-Za-z_]\w*|\d+)\s*"
_OPERAND = rf"\s*\((?:{_DIM}(?:,{_DIM})*)?\)\s*"
_OPERANDS = rf"{_OPERAND}(?:,{_OPERAND})*"
_SIGNATURE = re.compile(rf"^{_OPERANDS}->{_OPERANDS}$")

CoreDim = str | int


@dataclass(frozen=True)
class CoreSignature:
    """The core dims of each input and output; ``text`` is None for an elementwise ufunc
    (what ``np.ufunc.signature`` says)."""

    inputs: tuple[tuple[CoreDim, ...], ...]
    outputs: tuple[tuple[CoreDim, ...], ...]
    text: str | None

    @property
    def operands(self) -> tuple[tuple[CoreDim, ...], ...]:
        return self.inputs + self.outputs

    def dim_names(self) -> list[str]:
        """Distinct core dims in order of first appearance: NumPy numbers the sizes it
        passes to an inner loop this way (``dimensions[1 + k]``)."""
        names: list[str] = []
        for dims in self.operands:
            for d in dims:
                if str(d) not in names:
                    names.append(str(d))
        return names

    @classmethod
    def elementwise(cls, nin: int, nout: int) -> CoreSignature:
        return cls(((),) * nin, ((),) * nout, None)


def _operands(text: str) -> tuple[tuple[CoreDim, ...], ...]:
    found = []
    for group in re.findall(r"\(([^()]*)\)", text):
        dims = [d.strip() for d in group.split(",") if d.strip()]
        found.append(tuple(int(d) if d.isdigit() else d for d in dims))
    return tuple(found)


def parse_core_signature(text: str) -> CoreSignature:
    """``"(m,n),(n)->(m)"`` as NumPy reads it (no ``?`` flexible dims)."""
    if not _SIGNATURE.match(text):
        raise ValueError(f"gufunc signature {text!r} is not of the form '(n),(n)->()' "
                         "(names or sizes inside parentheses, operands separated by commas)")
    ins, outs = text.split("->")
    return CoreSignature(_operands(ins), _operands(outs), re.sub(r"\s+", "", text))


def _agrees(t: ArrayType, dims: tuple[CoreDim, ...]) -> bool:
    """A kernel type of the core rank whose fixed sizes the core dims also fix."""
    if t.ndim != len(dims):
        return False
    return all(not isinstance(k, int) or k == c for k, c in zip(t.dims, dims, strict=True))


def check_kernel_types(core: CoreSignature, signature: Signature) -> str | None:
    """Why ``signature`` cannot be the core of ``core``, or None when it can."""
    problem = _core_mismatch(("takes", "parameters", "inputs", "parameter"),
                             signature.params, core.inputs)
    if problem is None and signature.results is not None:
        problem = _core_mismatch(("returns", "results", "outputs", "result"),
                                 signature.results, core.outputs)
    return problem


def _core_mismatch(words: tuple[str, str, str, str], types: tuple[ArrayType, ...],
                   cores: tuple[tuple[CoreDim, ...], ...]) -> str | None:
    """Why the kernel's parameters (or results) cannot have the signature's core dims:
    ``words`` name them ("takes", "parameters", "inputs", "parameter")."""
    verb, plural, side, one = words
    if len(types) != len(cores):
        return (f"the kernel {verb} {len(types)} {plural} but the signature has "
                f"{len(cores)} {side}")
    for i, (t, dims) in enumerate(zip(types, cores, strict=True)):
        if not _agrees(t, dims):
            return f"{one} {i} is {t} but its core dims are ({', '.join(map(str, dims))})"
    return None
