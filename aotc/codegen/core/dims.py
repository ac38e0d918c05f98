"""Size expressions (:class:`~aotc.shapes.DimExpr`) as i64 LLVM values.

Both entry points evaluate the same expressions from the same symbols, so the dims
``P_shapes`` reports and the dims ``P`` loops over agree by construction. Evaluation is
memoized; callers only evaluate at the top level of a region (never inside a loop
nest they emit), where every earlier value dominates every later use; a nested region
(a control-flow body) gets a :meth:`DimEvaluator.child`.

``P_shapes`` evaluates in *checked* mode: every add and multiply is LLVM's
``*.with.overflow`` and the overflow bits are or-ed into :attr:`DimEvaluator.overflow`,
and both arms of an ``if_neg`` are computed only on their own path. Once ``P_shapes``
has proven that no size expression of a program overflows int64, ``P`` evaluates the
same expressions with plain wrapping arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping

from llvmlite import ir

from ...shapes import Atom, DimExpr, FloorDiv, IfNeg, Relu, Sym
from .dtypes import I1, I64, i64

_OVERFLOW_TYPE = ir.LiteralStructType([I64, I1])


class DimEvaluator:
    """Emit ``DimExpr`` s with ``builder``, reading size symbols from ``symbols``."""

    def __init__(self, builder: ir.IRBuilder, symbols: Mapping[str, ir.Value],
                 parent: DimEvaluator | None = None, checked: bool = False) -> None:
        self.builder = builder
        self.symbols = symbols
        self.parent = parent
        self.checked = checked
        #: i1: some checked operation so far overflowed (checked mode only).
        self.overflow: ir.Value = ir.Constant(I1, 0)
        self._cache: dict[DimExpr, ir.Value] = {}
        #: Symbols bound in this region (``bind_dim``): visible here and in child regions.
        self._bound: dict[str, ir.Value] = {}

    def child(self) -> DimEvaluator:
        """An evaluator for a nested region (a loop body): it reuses every value computed
        so far, which dominates the region, but keeps its own values to itself."""
        return DimEvaluator(self.builder, self.symbols, self, self.checked)

    def bind(self, name: str, value: ir.Value) -> None:
        """Size symbol ``name`` is ``value`` from here on in this region. A region
        lowered twice rebinds it, so values computed from the old binding are dropped."""
        self._bound[name] = value
        self._cache = {e: v for e, v in self._cache.items() if name not in e.symbols()}

    def _symbol(self, name: str) -> ir.Value:
        if name in self._bound:
            return self._bound[name]
        if self.parent is not None:
            return self.parent._symbol(name)
        try:
            return self.symbols[name]
        except KeyError:
            raise KeyError(f"size symbol {name!r} is not bound here") from None

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

    # -- arithmetic, wrapping or checked ------------------------------------------------
    def _arith(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        if not self.checked:
            return getattr(self.builder, op)(a, b)
        module = self.builder.module
        name = f"llvm.s{op}.with.overflow.i64"
        fn = module.globals.get(name) or ir.Function(
            module, ir.FunctionType(_OVERFLOW_TYPE, [I64, I64]), name)
        pair = self.builder.call(fn, [a, b])
        self.overflow = self.builder.or_(self.overflow, self.builder.extract_value(pair, 1))
        return self.builder.extract_value(pair, 0)

    def _polynomial(self, expr: DimExpr) -> ir.Value:
        total: ir.Value | None = None
        for mono, coeff in expr.terms:
            term: ir.Value = i64(coeff)
            if mono:
                term = self._monomial(mono)
                if coeff != 1:
                    term = self._arith("mul", term, i64(coeff))
            total = term if total is None else self._arith("add", total, term)
        return total if total is not None else i64(0)

    def _monomial(self, mono: tuple[Atom, ...]) -> ir.Value:
        value = self._atom(mono[0])
        for atom in mono[1:]:
            value = self._arith("mul", value, self._atom(atom))
        return value

    def _atom(self, atom: Atom) -> ir.Value:
        b = self.builder
        if isinstance(atom, Sym):
            return self._symbol(atom.name)
        if isinstance(atom, IfNeg):
            return self._if_neg(atom)
        inner = self(atom.expr)
        if isinstance(atom, Relu):
            return b.select(b.icmp_signed(">", inner, i64(0)), inner, i64(0))
        assert isinstance(atom, FloorDiv)
        # Floor (not truncating) division by a positive constant: -5 // 2 == -3.
        quot = b.sdiv(inner, i64(atom.divisor))
        rem = b.srem(inner, i64(atom.divisor))
        return b.sub(quot, b.zext(b.icmp_signed("<", rem, i64(0)), quot.type))

    def _if_neg(self, atom: IfNeg) -> ir.Value:
        b = self.builder
        negative = b.icmp_signed("<", self(atom.cond), i64(0))
        if not self.checked:  # both arms are cheap and wrap harmlessly: select
            return b.select(negative, self(atom.neg), self(atom.nonneg))
        # Checked: the arm not taken may overflow (``min(m, n)`` for ``m = -2**63``) without
        # meaning anything, so each arm is evaluated, and its overflow counted, on its path.
        arms: list[tuple[ir.Value, ir.Value, ir.Block]] = []
        with b.if_else(negative) as (then, otherwise):
            for arm, expr in ((then, atom.neg), (otherwise, atom.nonneg)):
                with arm:
                    inner = self.child()
                    inner.overflow = self.overflow
                    value = inner(expr)
                    arms.append((value, inner.overflow, b.block))
        value_phi = b.phi(I64)
        overflow_phi = b.phi(I1)
        for value, overflow, block in arms:
            value_phi.add_incoming(value, block)
            overflow_phi.add_incoming(overflow, block)
        self.overflow = overflow_phi
        return value_phi
