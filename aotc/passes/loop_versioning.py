"""Loop versioning: a loop nest whose index checks hold over its whole range runs
without them.

An explicit index loop checks each index on every iteration, as NumPy would: a compare
and a branch to the error exit, a select for negative indices, a clamp of the bound
size. Those exits keep LLVM's vectorizer away (``out[i, j] = a[i, j] + a[i, j + 1]``
ran 65x slower than Numba, which checks nothing), and in a nest they cost every
iteration of every level. An index that is affine in the nest's loop indices (``j + 1``,
``i + di``, ``w * j + c`` with ``w``, ``c`` invariant) takes its extreme values at the
corners of the box the indices range over, so evaluating it there before the nest
decides every check at once::

    for_loop[body](lo, hi, *consts, *carry)

becomes::

    ok = every check holds (index >= 0 too) at every corner, and no term can wrap
    cond[branches=(for_loop[body], for_loop[body without them])](ok, lo, hi, …)

An inner loop's index ranges over its bounds' extremes (a box around a triangular
nest). The checked nest runs otherwise, so an index out of range raises where it did,
after the same writes, and a negative index still counts from the end.

A loop is versioned as a whole nest when every index check in it can be proven so;
otherwise the loops inside it are tried, down to the innermost, which is versioned on the
checks it can prove (the others stay in its unchecked copy). Code grows by one copy of
each versioned nest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..ir import Atom, Eqn, Lit, Params, Program, Var, bound_uppers, nested_programs, runs_loops
from ..ops.control import cond_p, for_loop_p
from ..ops.core import ALL_PRIMITIVES, ELEMENTWISE, Primitive
from ..ops.index import raise_if_p
from ..ops.shape import bind_dim_p, dim_value_p, reshape_p, slice_p
from ..shapes import DimExpr
from .dce import dce
from .rewrite import Copier, Emitter, Renamer, map_nested

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
GE, GT, LT, AND, OR = _P["ge"], _P["gt"], _P["lt"], _P["logical_and"], _P["logical_or"]
SELECT, CONVERT, NOT = _P["select"], _P["convert"], _P["logical_not"]
#: Invariant work that may run before the loop even where the body would not reach it:
#: pure, cannot fail, scalars or views (integer pow of a negative exponent fails).
SPECULATABLE = frozenset(
    {p for p in _P.values() if p.has(ELEMENTWISE) and p is not _P["pow"]}
    | {dim_value_p, slice_p, reshape_p})
ZERO = Lit(0, I64)
#: Views: an element of an array is one of them with no axes left.
VIEWS = frozenset({slice_p, reshape_p})


def version_loops(program: Program) -> Program:
    """Version every loop nest (else the loops inside it) whose checks it can prove."""
    before: list[Eqn] = []  # the program's equations before the loop at hand
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        versioned = _versioned(eqn, before) if eqn.prim is for_loop_p \
            and eqn.params["step"] == 1 else None
        eqns += versioned or [map_nested(eqn, version_loops)]
        before.append(eqn)
    return program.replace(eqns=tuple(eqns))


# -- what the nest's values are ----------------------------------------------------------

@dataclass
class Facts:
    """A loop nest's values: invariant ones, and affine ones in the nest's indices with
    a bound on ``|value|`` when every term (each index, each invariant operand) lies
    within ``TERM_LIMIT``."""

    outer: dict[Var, Eqn]  # definitions before the nest in the program holding it
    #: The same, by what they compute: ``(prim, params, inputs) -> outs``.
    computed: dict[tuple[Primitive, Params, tuple[Atom, ...]], tuple[Var, ...]]
    #: A nested program's parameter -> the operand it is, one level up (the outermost
    #: body's constants: atoms of the program holding the nest).
    origin: dict[Var, Atom] = field(default_factory=dict)
    #: Each loop index of the nest -> its loop's bounds, atoms one level up.
    ranges: dict[Var, tuple[Atom, Atom]] = field(default_factory=dict)
    defs: dict[Var, Eqn] = field(default_factory=dict)
    invariant: set[Var] = field(default_factory=set)
    bound: dict[Var, int] = field(default_factory=dict)
    #: An affine value -> the indices it depends on.
    deps: dict[Var, frozenset[Var]] = field(default_factory=dict)
    eqns: list[Eqn] = field(default_factory=list)  # the nest's, nested programs' too

    def is_invariant(self, atom: Atom) -> bool:
        return isinstance(atom, Lit) or atom in self.invariant

    def term_bound(self, atom: Atom) -> int | None:
        """``|atom|``'s bound: a literal's own, an invariant's guard, an affine's bound."""
        if isinstance(atom, Lit):
            return abs(int(atom.value)) if atom.dtype == I64 else None
        if atom in self.invariant:
            return TERM_LIMIT if atom.type.dtype == I64 else None
        return self.bound.get(atom)

    def indices_of(self, atom: Atom) -> frozenset[Var]:
        return self.deps.get(atom, frozenset()) if isinstance(atom, Var) else frozenset()

    def size_expr(self, atom: Atom) -> DimExpr | None:
        """The size expression an invariant ``dim_value`` scalar holds."""
        while isinstance(atom, Var) and atom in self.origin:
            atom = self.origin[atom]
        if not isinstance(atom, Var):
            return None
        eqn = self.defs.get(atom) or self.outer.get(atom)
        return eqn.params["expr"] if eqn is not None and eqn.prim is dim_value_p else None

    def outside(self, atom: Atom) -> Atom | None:
        """``atom`` as a value the program holding the nest has before it: a parameter
        through its operands, a view computed there too as that one (None otherwise)."""
        while isinstance(atom, Var) and atom in self.origin:
            atom = self.origin[atom]
        eqn = self.defs.get(atom) if isinstance(atom, Var) else None
        if eqn is None:
            return atom
        if eqn.prim not in VIEWS:
            return None
        inputs = tuple(self.outside(a) for a in eqn.inputs)
        if any(a is None for a in inputs):
            return None
        outs = self.computed.get((eqn.prim, eqn.params, inputs))  # type: ignore[arg-type]
        return outs[eqn.outs.index(atom)] if outs else None

    def relate(self, param: Var, operand: Atom) -> None:
        """``param`` of a nested program is ``operand`` one level up."""
        self.origin[param] = operand
        if self.is_invariant(operand):
            self.invariant.add(param)
        elif (b := self.term_bound(operand)) is not None:
            self.bound[param] = b
            self.deps[param] = self.indices_of(operand)

    def add_index(self, index: Var, lower: Atom, upper: Atom) -> None:
        """A loop's index, when its bounds are invariant or affine."""
        if self.term_bound(lower) is not None and self.term_bound(upper) is not None:
            self.ranges[index] = (lower, upper)
            self.bound[index] = TERM_LIMIT
            self.deps[index] = frozenset({index})


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
    """``|out|``'s bound if ``eqn`` keeps its output affine in the indices, else None."""
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
    """Whether ``eqn`` is invariant work that can run before the nest: a scalar or a
    view, of invariant inputs, with no size the nest binds. An array's element only when
    the program read it before the nest (``w[i]`` in ``range(cap, w[i] - 1, -1)``):
    reading it anew there could read where the nest does not (``x[i - off[100]]`` in a
    loop that runs no time, with ``off`` of one element, read past ``off``'s end)."""
    if eqn.prim not in SPECULATABLE or _param_symbols(eqn) & local:
        return False
    if eqn.prim.has(ELEMENTWISE) and eqn.outs[0].type.shape != ():
        return False
    if not all(facts.is_invariant(a) for a in eqn.inputs):
        return False
    element = eqn.prim in VIEWS and not eqn.outs[0].type.shape and eqn.inputs[0].type.shape
    return not element or facts.outside(eqn.outs[0]) is not None


def analyze(loop: Eqn, before: Sequence[Eqn]) -> Facts:
    """The facts of the nest ``loop`` runs (a ``for_loop`` of step 1), after the
    equations ``before`` it."""
    body, n = loop.params["body"], loop.params["n_consts"]
    facts = Facts({v: e for e in before for v in e.outs},
                  {(e.prim, e.params, e.inputs): e.outs for e in before})
    for param, operand in zip(body.inputs[:n], loop.inputs[2:2 + n], strict=True):
        facts.origin[param] = operand
        facts.invariant.add(param)
    facts.ranges[body.inputs[n]] = (loop.inputs[0], loop.inputs[1])
    facts.bound[body.inputs[n]] = TERM_LIMIT
    facts.deps[body.inputs[n]] = frozenset({body.inputs[n]})
    _classify(body, facts, set(bound_uppers(body)))  # sizes that change with the indices
    return facts


def _classify(program: Program, facts: Facts, local: set[str]) -> None:
    """Sort ``program``'s values into ``facts``, and those of the programs nested in it:
    a branch's parameters are what its operands are, an inner loop's constants too, and
    its index ranges over its bounds."""
    for eqn in program.eqns:
        facts.eqns.append(eqn)
        facts.defs.update((v, eqn) for v in eqn.outs)
        if _speculatable(eqn, facts, local):
            facts.invariant.update(eqn.outs)
        elif len(eqn.outs) == 1 and (b := _affine_bound(eqn, facts)) is not None:
            facts.bound[eqn.outs[0]] = b
            facts.deps[eqn.outs[0]] = frozenset().union(
                *(facts.indices_of(a) for a in eqn.inputs))
        if eqn.prim is cond_p:
            for branch in eqn.params["branches"]:
                for param, operand in zip(branch.inputs, eqn.inputs[1:], strict=True):
                    facts.relate(param, operand)
                _classify(branch, facts, local)
        elif eqn.prim is for_loop_p and eqn.params["step"] == 1:
            body, n = eqn.params["body"], eqn.params["n_consts"]
            for param, operand in zip(body.inputs[:n], eqn.inputs[2:2 + n], strict=True):
                facts.relate(param, operand)
            facts.add_index(body.inputs[n], eqn.inputs[0], eqn.inputs[1])
            _classify(body, facts, local)
        else:
            for nested in nested_programs(eqn):
                _classify(nested, facts, local)


# -- the checks it can prove -------------------------------------------------------------

@dataclass(frozen=True)
class IndexCheck:
    """A ``raise_if`` the nest's test can decide once: ``raise_if (i >= size or
    i < -size)`` as indexing emits it (``index``: proven with ``i >= 0``, so negative
    indices need no wrap), ``raise_if (v < low or v > high)`` as range bounds emit it,
    both over an invariant or affine value, or any ``raise_if`` of an invariant
    condition (``value`` None)."""

    eqn: Eqn
    value: Atom | None
    low: Atom = ZERO
    high: Atom = ZERO  # exclusive, or inclusive for a range check
    index: bool = False

    @property
    def size(self) -> Atom:
        return self.high


def _defined_as(facts: Facts, atom: Atom, prim: Primitive) -> Eqn | None:
    eqn = facts.defs.get(atom) if isinstance(atom, Var) else None
    return eqn if eqn is not None and eqn.prim is prim else None


def _index_check(eqn: Eqn, facts: Facts) -> IndexCheck | None:
    if eqn.prim is not raise_if_p:
        return None
    if facts.is_invariant(eqn.inputs[0]):
        return IndexCheck(eqn, None)
    either = _defined_as(facts, eqn.inputs[0], OR)
    if either is None:
        return None
    for first, second in (either.inputs, either.inputs[::-1]):
        if eqn.params["error"] == "IndexError":
            above, below = _defined_as(facts, first, GE), _defined_as(facts, second, LT)
            if above is None or below is None:
                continue
            i, size = above.inputs
            negated = _defined_as(facts, below.inputs[1], NEG)
            if below.inputs[0] is i and negated is not None and negated.inputs[0] is size \
                    and facts.is_invariant(size) and facts.term_bound(i) is not None:
                return IndexCheck(eqn, i, ZERO, size, index=True)
        else:
            below, above = _defined_as(facts, first, LT), _defined_as(facts, second, GT)
            if below is None or above is None or below.inputs[0] is not above.inputs[0]:
                continue
            v, low, high = below.inputs[0], below.inputs[1], above.inputs[1]
            if facts.is_invariant(low) and facts.is_invariant(high) \
                    and facts.term_bound(v) is not None:
                return IndexCheck(eqn, v, low, high)
    return None


# -- emitting the test before the loop ---------------------------------------------------

#: A corner of the nest's box: each index that matters -> its value there (outer atoms).
Corner = dict[Var, Atom]


class Hoisted(Emitter):
    """Equations for the program holding the nest: invariants and index values, cloned
    from the nest with its indices replaced by values of the enclosing program."""

    def __init__(self, facts: Facts, loc: Any) -> None:
        super().__init__(loc)
        self.facts = facts
        self.memo: dict[tuple[Var, frozenset[tuple[Var, Atom]]], Atom] = {}
        self.leaves: dict[Var, None] = {}  # invariant terms of affine expressions
        self.extremes: dict[Var, tuple[Atom, Atom]] = {}

    def value(self, atom: Atom, corner: Corner) -> Atom:
        """``atom`` outside the nest; an affine one at ``corner``."""
        facts = self.facts
        if isinstance(atom, Lit):
            return atom
        if atom in facts.ranges:
            return corner[atom]
        if atom in facts.origin:
            return self.value(facts.origin[atom], corner)
        if atom not in facts.defs:
            return atom  # a value of the program holding the nest
        invariant = atom in facts.invariant
        at = frozenset() if invariant else frozenset(
            (i, corner[i]) for i in facts.indices_of(atom))
        if invariant and (computed := facts.outside(atom)) is not None:
            return computed  # a view the program holding the nest has already
        if (atom, at) not in self.memo:
            eqn = facts.defs[atom]
            if not invariant:
                self.leaves.update((a, None) for a in eqn.inputs
                                   if isinstance(a, Var) and a in facts.invariant)
            inputs = tuple(self.value(a, corner) for a in eqn.inputs)
            outs = tuple(Var(v.type) for v in eqn.outs)
            self.eqns.append(replace(eqn, inputs=inputs, outs=outs))
            self.memo.update(((v, at), o) for v, o in zip(eqn.outs, outs, strict=True))
        return self.memo[(atom, at)]

    def corners(self, indices: frozenset[Var]) -> list[Corner]:
        """Every corner of the box ``indices`` range over (outermost first)."""
        found: list[Corner] = [{}]
        for index in sorted(indices, key=lambda v: v.id):
            low, high = self.extreme(index)
            found = [{**c, index: v} for c in found for v in dict.fromkeys((low, high))]
        return found

    def extreme(self, index: Var) -> tuple[Atom, Atom]:
        """The least and the greatest value ``index`` takes: its first and its last, over
        every corner of the indices its bounds depend on."""
        if index not in self.extremes:
            lower, upper = self.facts.ranges[index]
            lows = [self.value(lower, c) for c in self.corners(self.facts.indices_of(lower))]
            highs = [self.emit(SUB, self.value(upper, c), Lit(1, I64))
                     for c in self.corners(self.facts.indices_of(upper))]
            self.extremes[index] = (self.fold(LT, lows), self.fold(GT, highs))
        return self.extremes[index]

    def fold(self, better: Primitive, values: Sequence[Atom]) -> Atom:
        """The least (``better`` is LT) or the greatest (GT) of ``values``."""
        found = values[0]
        for value in values[1:]:
            found = self.emit(SELECT, self.emit(better, value, found), value, found)
        return found

    def within(self, value: Atom, low: Atom, high: Atom) -> Var:
        """``low <= value < high``."""
        return self.emit(AND, self.emit(GE, value, low), self.emit(LT, value, high))

    def all_of(self, conditions: list[Var]) -> Atom:
        found: Atom = Lit(True, BOOL)
        for c in conditions:
            found = c if isinstance(found, Lit) else self.emit(AND, found, c)
        return found


def _proof(checks: list[IndexCheck], facts: Facts, loc: Any) -> tuple[Hoisted, Atom]:
    """The test that every check holds, with a non-negative index, at every corner of
    the box (when a range is empty the test may fail: either nest then does nothing)."""
    hoisted = Hoisted(facts, loc)
    low, high = Lit(-TERM_LIMIT, I64), Lit(TERM_LIMIT + 1, I64)
    ranges: dict[tuple[Atom, Atom, Atom], None] = {}
    decided: list[Var] = []
    for check in checks:
        if check.value is None:
            decided.append(hoisted.emit(NOT, hoisted.value(check.eqn.inputs[0], {})))
            continue
        first, last = hoisted.value(check.low, {}), hoisted.value(check.high, {})
        if not check.index:  # low <= v <= high
            last = hoisted.emit(ADD, last, Lit(1, I64))
        for corner in hoisted.corners(facts.indices_of(check.value)):
            ranges[(hoisted.value(check.value, corner), first, last)] = None
    for extremes in list(hoisted.extremes.values()):
        ranges.update(((e, low, high), None) for e in extremes)
    for leaf in list(hoisted.leaves):
        ranges[(hoisted.value(leaf, {}), low, high)] = None
    return hoisted, hoisted.all_of(decided + [hoisted.within(*r) for r in ranges])


# -- the unchecked body ------------------------------------------------------------------

@dataclass(frozen=True)
class Proven:
    """What holds on every iteration of the unchecked nest."""

    checks: frozenset[Eqn]
    nonneg: frozenset[Atom]  # these indices are >= 0
    below: frozenset[tuple[Atom, DimExpr | None]]  # (index, size): index < size


def _unchecked(body: Program, facts: Facts, checks: list[IndexCheck]) -> Program:
    indices = [c.value for c in checks if c.index and c.value is not None]
    sizes = [c.size for c in checks if c.index]
    proven = Proven(frozenset(c.eqn for c in checks), frozenset(indices),
                    frozenset((i, facts.size_expr(size)) for i, size in zip(indices, sizes,
                                                                           strict=True)))
    return Copier({}).program(dce(_without_checks(body, proven)))  # fresh variables


def _without_checks(program: Program, proven: Proven) -> Program:
    """``program`` without the proven checks (in nested programs too); indices known
    non-negative are not wrapped, sizes bound from indices known below them not
    clamped."""
    rename = Renamer()
    eqns: list[Eqn] = []
    for eqn in program.eqns:
        if eqn in proven.checks:
            continue
        eqn = map_nested(rename.eqn(eqn), lambda nested: _without_checks(nested, proven))
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


def _branch(loop: Eqn, body: Program) -> Program:
    """``lambda lower, upper, *consts, *carry: for_loop[body](…)``."""
    inputs = tuple(Var(a.type) for a in loop.inputs)
    outs = tuple(Var(v.type) for v in loop.outs)
    params = Params.of({**dict(loop.params), "body": body})
    return Program(inputs, (Eqn(for_loop_p, inputs, params, outs, loop.loc),), outs)


def _versioned(loop: Eqn, before: Sequence[Eqn]) -> list[Eqn] | None:
    """The nest ``loop`` runs, versioned: when it has inner loops, only if every index
    check in it is proven (else its inner loops are tried on their own)."""
    body = loop.params["body"]
    facts = analyze(loop, before)
    found = [(e, _index_check(e, facts)) for e in facts.eqns]
    checks = [c for _, c in found if c is not None]
    unproven = any(c is None and e.prim is raise_if_p and e.params["error"] == "IndexError"
                   for e, c in found)
    if not any(c.index for c in checks) or (unproven and runs_loops(body)):
        return None
    hoisted, proven = _proof(checks, facts, loop.loc)
    choice = hoisted.emit(CONVERT, proven, dtype=I64)
    branches = (_branch(loop, version_loops(body)), _branch(loop, _unchecked(body, facts, checks)))
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
