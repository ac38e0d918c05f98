"""Size expressions (:class:`~aotc.shapes.DimExpr`) as i64 LLVM values.

Both entry points evaluate the same expressions from the same symbols, so the dims
``P_shapes`` reports and the dims ``P`` loops over agree by construction. Evaluation is
memoized; callers only evaluate at the top level of a region (never inside a loop
nest they emit), where every earlier value dominates every later use; a nested region
(a control-flow body) gets a :meth:`DimEvaluator.child`.
"""

from __future__ import annotations

from collections.abc import Mapping

from llvmlite import ir

from ..shapes import DimExpr, FloorDiv, Relu, Sym
from .dtypes import i64


class DimEvaluator:
    """Emit ``DimExpr`` s with ``builder``, reading size symbols from ``symbols``."""

    def __init__(self, builder: ir.IRBuilder, symbols: Mapping[str, ir.Value],
                 parent: DimEvaluator | None = None) -> None:
        self.builder = builder
        self.symbols = symbols
        self.parent = parent
        self._cache: dict[DimExpr, ir.Value] = {}

    def child(self) -> DimEvaluator:
        """An evaluator for a nested region (a loop body): it reuses every value computed
        so far, which dominates the region, but keeps its own values to itself."""
        return DimEvaluator(self.builder, self.symbols, self)

    def _lookup(self, expr: DimExpr) -> ir.Value | None:
        found = self._cache.get(expr)
        if found is None and self.parent is not None:
            return self.parent._lookup(expr)
        return found

    def __call__(self, expr: DimExpr) -> ir.Value:
        if expr.is_const:
            return i64(expr.value)
        cached = self._lookup(expr)
        if cached is None:
            cached = self._cache[expr] = self._polynomial(expr)
        return cached

    def _polynomial(self, expr: DimExpr) -> ir.Value:
        b = self.builder
        total: ir.Value | None = None
        for mono, coeff in expr.terms:
            term: ir.Value = i64(coeff)
            if mono:
                term = self._monomial(mono)
                if coeff != 1:
                    term = b.mul(term, i64(coeff))
            total = term if total is None else b.add(total, term)
        return total if total is not None else i64(0)

    def _monomial(self, mono: tuple) -> ir.Value:
        value = self._atom(mono[0])
        for atom in mono[1:]:
            value = self.builder.mul(value, self._atom(atom))
        return value

    def _atom(self, atom: Sym | Relu | FloorDiv) -> ir.Value:
        b = self.builder
        if isinstance(atom, Sym):
            try:
                return self.symbols[atom.name]
            except KeyError:
                raise KeyError(f"size symbol {atom.name!r} has no DimSource") from None
        inner = self(atom.expr)
        if isinstance(atom, Relu):
            return b.select(b.icmp_signed(">", inner, i64(0)), inner, i64(0))
        # Floor (not truncating) division by a positive constant: -5 // 2 == -3.
        quot = b.sdiv(inner, i64(atom.divisor))
        rem = b.srem(inner, i64(atom.divisor))
        return b.sub(quot, b.zext(b.icmp_signed("<", rem, i64(0)), quot.type))
