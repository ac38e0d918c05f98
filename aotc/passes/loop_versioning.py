"""Loop versioning: an innermost loop whose index checks hold over its whole range runs
without them.

An explicit index loop checks each index on every iteration, as NumPy would: a compare
and a branch to the error exit, a select for negative indices, a clamp of the bound
size. Those exits keep LLVM's vectorizer away (``out[i, j] = a[i, j] + a[i, j + 1]``
ran 65x slower than Numba, which checks nothing). An index that is affine in the loop
index (``j + 1``, ``w * j + c`` with ``w``, ``c`` invariant) takes its extreme values at
the first and the last iteration, so two evaluations before the loop decide every
check at once::

    for_loop[body](lo, hi, *consts, *carry)

becomes::

    ok = checks hold (index >= 0 too) at lo and at hi - 1, and no term can wrap
    cond[branches=(for_loop[body], for_loop[body without them])](ok, lo, hi, …)

The checked loop runs otherwise, so an index out of range raises where it did, after
the same writes, and a negative index still counts from the end. Only innermost loops
are versioned: code grows by one copy of each innermost body.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..ir import Atom, Eqn, Lit, Params, Program, Var, bound_uppers, runs_loops
from ..ops.control import cond_p, for_loop_p
from ..ops.core import ALL_PRIMITIVES, ELEMENTWISE, Primitive, type_rules
from ..ops.index import raise_if_p
from ..ops.shape import bind_dim_p, dim_value_p, reshape_p, slice_p
from ..shapes import DimExpr
from .dce import dce
from .rewrite import Renamer, map_nested

I64 = np.dtype(np.int64)
BOOL = np.dtype(bool)
#: Every term of a hoisted index expression (the loop's index, each invariant operand)
#: is checked at run time to lie within this…
TERM_LIMIT = 2**30
#: …so an expression whose static bound stays below this cannot wrap in int64
#: (``a * (lo + k) + c``: 2**61 + 2**30).
VALUE_LIMIT = 2**63

_P = ALL_PRIMITIVES
ADD, SUB, MUL, NEG = _P["add"], _P["sub"], _P["mul"], _P["neg"]
GE, LT, AND, OR = _P["ge"], _P["lt"], _P["logical_and"], _P["logical_or"]
SELECT, CONVERT = _P["select"], _P["convert"]
#: Invariant work that may run before the loop even where the body would not reach it:
#: pure, cannot fail, scalars or views (integer pow of a negative exponent fails).
SPECULATABLE = frozenset(
    {p for p in _P.values() if p.has(ELEMENTWISE) and p is not _P["pow"]}
    | {dim_value_p, slice_p, reshape_p})
ZERO = Lit(0, I64)


def version_loops(program: Program) -> Program:
    """Version every innermost ``for_loop`` that has index checks it can prove."""
    defs = {v: e for e in program.eqns for v in e.outs}
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        eqn = map_nested(eqn, version_loops)
        if eqn.prim is for_loop_p and eqn.params["step"] == 1 \
                and not runs_loops(eqn.params["body"]):
            eqns += _versioned(eqn, defs) or [eqn]
        else:
            eqns.append(eqn)
    return program.replace(eqns=tuple(eqns))


# -- what the body's values are ----------------------------------------------------------

@dataclass
class Facts:
    """A loop body's values: invariant ones, and affine ones with a bound on ``|value|``
    when every term (the index, each invariant operand) lies within ``TERM_LIMIT``."""

    body: Program
    consts: dict[Var, Atom]  # body parameter -> the loop's operand
    outer: dict[Var, Eqn]  # definitions in the program holding the loop
    index: Var
    defs: dict[Var, Eqn] = field(default_factory=dict)
    invariant: set[Var] = field(default_factory=set)
    bound: dict[Var, int] = field(default_factory=dict)
    #: A branch's parameter -> the operand it is, in the program holding the ``cond``.
    alias: dict[Var, Atom] = field(default_factory=dict)
    eqns: list[Eqn] = field(default_factory=list)  # the body's and its branches'

    def is_invariant(self, atom: Atom) -> bool:
        return isinstance(atom, Lit) or atom in self.invariant

    def term_bound(self, atom: Atom) -> int | None:
        """``|atom|``'s bound: a literal's own, an invariant's guard, an affine's bound."""
        if isinstance(atom, Lit):
            return abs(int(atom.value)) if atom.dtype == I64 else None
        if atom in self.invariant:
            return TERM_LIMIT if atom.type.dtype == I64 else None
        return self.bound.get(atom)

    def size_expr(self, atom: Atom) -> DimExpr | None:
        """The size expression an invariant ``dim_value`` scalar holds."""
        while isinstance(atom, Var) and atom in self.alias:
            atom = self.alias[atom]
        if not isinstance(atom, Var):
            return None
        eqn = self.defs.get(atom)
        outer = self.consts.get(atom)
        if eqn is None and isinstance(outer, Var):
            eqn = self.outer.get(outer)
        return eqn.params["expr"] if eqn is not None and eqn.prim is dim_value_p else None


def _param_symbols(eqn: Eqn) -> set[str]:
    found: set[str] = set()
    for _, value in eqn.params:
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, DimExpr):
                found |= item.symbols()
    for out in eqn.outs:
        for d in out.type.shape:
            found |= d.symbols()
    return found


def _affine_bound(eqn: Eqn, facts: Facts) -> int | None:
    """``|out|``'s bound if ``eqn`` keeps its output affine in the index, else None."""
    if eqn.outs[0].type.dtype != I64 or eqn.outs[0].type.shape != ():
        return None
    bounds = [facts.term_bound(a) for a in eqn.inputs]
    if None in bounds or all(facts.is_invariant(a) for a in eqn.inputs):
        return None
    found: int | None = None
    if eqn.prim in (ADD, SUB):
        found = sum(bounds)  # type: ignore[arg-type]
    elif eqn.prim is NEG:
        found = bounds[0]
    elif eqn.prim is MUL and any(facts.is_invariant(a) for a in eqn.inputs):
        found = bounds[0] * bounds[1]  # type: ignore[operator]
    return found if found is not None and found < VALUE_LIMIT else None


def _speculatable(eqn: Eqn, facts: Facts, local: set[str]) -> bool:
    """Whether ``eqn`` is invariant work that can run before the loop: a scalar or a
    view, of invariant inputs, with no size the body binds."""
    if eqn.prim not in SPECULATABLE or _param_symbols(eqn) & local:
        return False
    if eqn.prim.has(ELEMENTWISE) and eqn.outs[0].type.shape != ():
        return False
    return all(facts.is_invariant(a) for a in eqn.inputs)


def analyze(body: Program, consts: dict[Var, Atom], outer: dict[Var, Eqn]) -> Facts:
    n = len(consts)
    facts = Facts(body, consts, outer, body.inputs[n])
    facts.invariant.update(body.inputs[:n])
    facts.bound[facts.index] = TERM_LIMIT
    _classify(body, facts, set(bound_uppers(body)))  # sizes that change with the index
    return facts


def _classify(program: Program, facts: Facts, local: set[str]) -> None:
    """Sort ``program``'s values into ``facts``; a branch's parameters are what its
    operands are, and its values are sorted the same way."""
    for eqn in program.eqns:
        facts.eqns.append(eqn)
        facts.defs.update((v, eqn) for v in eqn.outs)
        if _speculatable(eqn, facts, local):
            facts.invariant.update(eqn.outs)
        elif len(eqn.outs) == 1 and (b := _affine_bound(eqn, facts)) is not None:
            facts.bound[eqn.outs[0]] = b
        if eqn.prim is cond_p:
            for branch in eqn.params["branches"]:
                for param, operand in zip(branch.inputs, eqn.inputs[1:], strict=True):
                    facts.alias[param] = operand
                    if facts.is_invariant(operand):
                        facts.invariant.add(param)
                    elif (b := facts.term_bound(operand)) is not None:
                        facts.bound[param] = b
                _classify(branch, facts, local)


# -- the checks it can prove -------------------------------------------------------------

@dataclass(frozen=True)
class IndexCheck:
    """``raise_if (i >= size or i < -size)``, as indexing emits it."""

    eqn: Eqn
    index: Atom
    size: Atom


def _defined_as(facts: Facts, atom: Atom, prim: Primitive) -> Eqn | None:
    eqn = facts.defs.get(atom) if isinstance(atom, Var) else None
    return eqn if eqn is not None and eqn.prim is prim else None


def _index_check(eqn: Eqn, facts: Facts) -> IndexCheck | None:
    if eqn.prim is not raise_if_p or eqn.params["error"] != "IndexError":
        return None
    either = _defined_as(facts, eqn.inputs[0], OR)
    if either is None:
        return None
    for high, low in (either.inputs, either.inputs[::-1]):
        above, below = _defined_as(facts, high, GE), _defined_as(facts, low, LT)
        if above is None or below is None:
            continue
        i, size = above.inputs
        negated = _defined_as(facts, below.inputs[1], NEG)
        if below.inputs[0] is i and negated is not None and negated.inputs[0] is size \
                and facts.is_invariant(size) and facts.term_bound(i) is not None:
            return IndexCheck(eqn, i, size)
    return None


# -- emitting the test before the loop ---------------------------------------------------

class Hoisted:
    """Equations for the program holding the loop: invariants and index values, cloned
    from the body with the index replaced by a value of the enclosing program."""

    def __init__(self, facts: Facts, loc: Any) -> None:
        self.facts, self.loc = facts, loc
        self.eqns: list[Eqn] = []
        self.memo: dict[tuple[Var, Atom | None], Atom] = {}
        self.leaves: dict[Var, None] = {}  # invariant terms of affine expressions

    def emit(self, prim: Primitive, *inputs: Atom, **params: Any) -> Var:
        (out_type,) = type_rules[prim](*(a.type for a in inputs), **params)
        out = Var(out_type)
        self.eqns.append(Eqn(prim, inputs, Params.of(params), (out,), self.loc))
        return out

    def value(self, atom: Atom, at: Atom | None) -> Atom:
        """``atom`` outside the loop; for an affine one, at index ``at``."""
        facts = self.facts
        if isinstance(atom, Lit):
            return atom
        if atom in facts.alias:
            return self.value(facts.alias[atom], at)
        if atom in facts.consts:
            return facts.consts[atom]
        if atom is facts.index:
            assert at is not None
            return at
        invariant = atom in facts.invariant
        key = (atom, None if invariant else at)
        if key not in self.memo:
            eqn = facts.defs[atom]
            if not invariant:
                self.leaves.update((a, None) for a in eqn.inputs
                                   if isinstance(a, Var) and a in facts.invariant)
            inputs = tuple(self.value(a, at) for a in eqn.inputs)
            outs = tuple(Var(v.type) for v in eqn.outs)
            self.eqns.append(replace(eqn, inputs=inputs, outs=outs))
            self.memo.update(((v, key[1]), o) for v, o in zip(eqn.outs, outs, strict=True))
        return self.memo[key]

    def within(self, value: Atom, low: Atom, high: Atom) -> Var:
        """``low <= value < high``."""
        return self.emit(AND, self.emit(GE, value, low), self.emit(LT, value, high))

    def all_of(self, conditions: list[Var]) -> Atom:
        found: Atom = Lit(True, BOOL)
        for c in conditions:
            found = c if isinstance(found, Lit) else self.emit(AND, found, c)
        return found


def _proof(checks: list[IndexCheck], facts: Facts, lower: Atom, upper: Atom,
           loc: Any) -> tuple[Hoisted, Atom]:
    """The test that every check holds, with a non-negative index, on the whole range
    (when the range is empty the test may fail: either loop then does nothing)."""
    hoisted = Hoisted(facts, loc)
    last = hoisted.emit(SUB, upper, Lit(1, I64))
    low, high = Lit(-TERM_LIMIT, I64), Lit(TERM_LIMIT + 1, I64)
    ranges: dict[tuple[Atom, Atom, Atom], None] = {(lower, low, high): None,
                                                   (last, low, high): None}
    for check in checks:
        size = hoisted.value(check.size, None)
        for at in (lower, last):
            ranges[(hoisted.value(check.index, at), ZERO, size)] = None
    for leaf in list(hoisted.leaves):
        ranges[(hoisted.value(leaf, None), low, high)] = None
    return hoisted, hoisted.all_of([hoisted.within(*r) for r in ranges])


# -- the unchecked body ------------------------------------------------------------------

@dataclass(frozen=True)
class Proven:
    """What holds on every iteration of the unchecked loop."""

    checks: frozenset[Eqn]
    nonneg: frozenset[Atom]  # these indices are >= 0
    below: frozenset[tuple[Atom, DimExpr | None]]  # (index, size): index < size


def _unchecked(facts: Facts, checks: list[IndexCheck]) -> Program:
    proven = Proven(frozenset(c.eqn for c in checks), frozenset(c.index for c in checks),
                    frozenset((c.index, facts.size_expr(c.size)) for c in checks))
    return fresh_copy(dce(_without_checks(facts.body, proven)))


def _without_checks(program: Program, proven: Proven) -> Program:
    """``program`` without the proven checks (in branches too); indices known
    non-negative are not wrapped, sizes bound from indices known below them not
    clamped."""
    rename = Renamer()
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        if eqn in proven.checks:
            continue
        eqn = rename.eqn(eqn)
        if eqn.prim is cond_p:
            eqn = map_nested(eqn, lambda branch: _without_checks(branch, proven))
        first = eqn.inputs[0] if eqn.inputs else None
        if eqn.prim is LT and first in proven.nonneg and eqn.inputs[1] == ZERO:
            rename.env[eqn.outs[0]] = Lit(False, BOOL)
        elif eqn.prim is SELECT and isinstance(first, Lit) \
                and (kept := eqn.inputs[1] if first.value else eqn.inputs[2]).type \
                == eqn.outs[0].type:
            rename.env[eqn.outs[0]] = kept
        elif eqn.prim is bind_dim_p and (first, eqn.params["upper"]) in proven.below:
            eqns.append(replace(eqn, params=Params.of({**dict(eqn.params), "proven": True})))
        else:
            eqns.append(eqn)
    return rename.finish(program, eqns)


def fresh_copy(program: Program) -> Program:
    """The same program with new variables (nested programs are closed: each its own)."""
    rename = Renamer()
    rename.env.update((v, Var(v.type)) for v in program.inputs)
    eqns = []
    for eqn in program.eqns:
        eqn = map_nested(rename.eqn(eqn), fresh_copy)
        outs = tuple(Var(v.type) for v in eqn.outs)
        rename.env.update(zip(eqn.outs, outs, strict=True))
        eqns.append(replace(eqn, outs=outs))
    inputs = tuple(rename(v) for v in program.inputs)
    return rename.finish(program, eqns).replace(inputs=inputs)  # type: ignore[arg-type]


def _branch(loop: Eqn, body: Program) -> Program:
    """``lambda lower, upper, *consts, *carry: for_loop[body](…)``."""
    inputs = tuple(Var(a.type) for a in loop.inputs)
    outs = tuple(Var(v.type) for v in loop.outs)
    params = Params.of({**dict(loop.params), "body": body})
    return Program(inputs, (Eqn(for_loop_p, inputs, params, outs, loop.loc),), outs)


def _versioned(loop: Eqn, outer: dict[Var, Eqn]) -> list[Eqn] | None:
    body, n = loop.params["body"], loop.params["n_consts"]
    consts = dict(zip(body.inputs[:n], loop.inputs[2:2 + n], strict=True))
    facts = analyze(body, consts, outer)
    checks = [c for c in (_index_check(e, facts) for e in facts.eqns) if c is not None]
    if not checks:
        return None
    hoisted, proven = _proof(checks, facts, loop.inputs[0], loop.inputs[1], loop.loc)
    choice = hoisted.emit(CONVERT, proven, dtype=I64)
    branches = (_branch(loop, body), _branch(loop, _unchecked(facts, checks)))
    return [*hoisted.eqns, Eqn(cond_p, (choice, *loop.inputs), Params.of({"branches": branches}),
                               loop.outs, loop.loc)]


def versioned_loops(eqn: Eqn) -> tuple[Eqn, Eqn] | None:
    """(checked, unchecked) ``for_loop`` s if ``eqn`` is a loop this pass versioned."""
    branches = eqn.params["branches"] if eqn.prim is cond_p else ()
    loops = [b.eqns[0] for b in branches if len(b.eqns) == 1]
    if len(loops) != 2 or len(branches) != 2:
        return None
    same = [{k: v for k, v in e.params if k != "body"} for e in loops]
    if all(e.prim is for_loop_p and e.inputs == b.inputs and e.outs == b.outputs
           for e, b in zip(loops, branches, strict=True)) and same[0] == same[1]:
        return loops[0], loops[1]
    return None


def top_loops(program: Program) -> list[Eqn]:
    """The program's own ``for_loop`` s, a versioned one as its checked copy."""
    found = []
    for eqn in program.eqns:
        pair = versioned_loops(eqn)
        if eqn.prim is for_loop_p or pair is not None:
            found.append(eqn if pair is None else pair[0])
    return found
