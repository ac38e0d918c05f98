"""The IR: a flat SSA program of equations ``outs = prim[params](ins)``.

Types are small and frozen, in the manner of JAX's Jaxpr: a :class:`Var` has an
:class:`AType` (dtype and symbolic shape), a :class:`Lit` is a scalar constant, an
:class:`Eqn` applies a primitive and remembers the user's source line, and a
:class:`Program` lists inputs, equations, outputs and the runtime :class:`Check` s on
sizes. Params may hold nested programs (control flow) and dimension expressions.

Every consumer is the same short loop over ``program.eqns`` with an environment.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .errors import Loc
from .ops.calls import call_p
from .ops.core import COMPARE, EFFECT, GUARDED, LOOP, STATEFUL, Primitive, type_rules
from .ops.shape import bind_dim_p
from .shapes import DimExpr, FloorDiv, IfNeg, Relu, Sym
from .tracing.avals import AType
from .types import SHORT_NAMES

_var_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class Var:
    """An SSA value; identity is the variable (two Vars are never equal)."""

    type: AType
    id: int = field(default_factory=lambda: next(_var_ids))

    def __hash__(self) -> int:
        return self.id

    def __repr__(self) -> str:
        return f"Var#{self.id}:{self.type}"


@dataclass(frozen=True)
class Lit:
    """A scalar constant of a definite dtype."""

    value: Any
    dtype: np.dtype

    @property
    def type(self) -> AType:
        return AType(self.dtype, ())

    def __post_init__(self) -> None:
        # Store NumPy scalars so equal literals compare and hash equal.
        object.__setattr__(self, "value", np.asarray(self.value, self.dtype)[()])

    def __hash__(self) -> int:
        return hash((self.dtype, self.value.tobytes()))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Lit) and other.dtype == self.dtype
                and other.value.tobytes() == self.value.tobytes())

    def __str__(self) -> str:
        return f"{scalar_text(self.value)}:{SHORT_NAMES[self.dtype]}"


Atom = Var | Lit


def scalar_text(value: np.generic) -> str:
    """Python's repr of a scalar, or for a NaN of another sign or payload than NumPy's,
    its bytes in hex (``0x...``, in memory order)."""
    text = repr(value.item())
    if value.dtype.kind in "fc" and np.isnan(value):
        back = (complex if value.dtype.kind == "c" else float)(text)
        if np.asarray(back, value.dtype).tobytes() != value.tobytes():
            return "0x" + value.tobytes().hex()
    return text


class Params(tuple[tuple[str, Any], ...]):
    """Hashable, ordered parameters; read them as a dict with ``dict(eqn.params)``."""

    @staticmethod
    def of(mapping: dict[str, Any]) -> Params:
        return Params(sorted(mapping.items()))

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for k, v in tuple.__iter__(self):
                if k == key:
                    return v
            raise KeyError(key)
        return tuple.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default


@dataclass(frozen=True, eq=False)
class Eqn:
    prim: Primitive
    inputs: tuple[Atom, ...]
    params: Params
    outs: tuple[Var, ...]
    loc: Loc | None = None


@dataclass(frozen=True)
class Check:
    """A runtime condition on sizes: ``lhs <op> rhs`` else raise ``error`` with ``message``.

    ``message`` may use ``{lhs}`` and ``{rhs}``, filled with the runtime values.
    """

    op: str  # "==", ">=", "<", "<="
    lhs: DimExpr
    rhs: DimExpr
    error: str  # "ValueError" or "IndexError"
    message: str

    def holds(self, lhs: int, rhs: int) -> bool:
        return COMPARE[self.op](lhs, rhs)


@dataclass(frozen=True)
class DimSource:
    """Where a size symbol is read at run time: ``axis`` of input ``index``, or its value."""

    symbol: str
    index: int
    axis: int | None  # None: the input is an integer scalar whose value is the symbol
    #: Or the symbol is this program's output, computed from the scalar inputs (the
    #: kernel's inputs; see aotc.tracing.derived).
    program: Program | None = None
    #: Per error that program may raise (``runtime_errors``), the 1-based index of the
    #: kernel's check that ``P_shapes`` reports it as.
    errors: tuple[int, ...] = ()


@dataclass(frozen=True)
class Program:
    inputs: tuple[Var, ...]
    eqns: tuple[Eqn, ...]
    outputs: tuple[Atom, ...]
    dim_sources: tuple[DimSource, ...] = ()
    checks: tuple[Check, ...] = ()
    name: str = "kernel"
    #: Writes into arguments: after the kernel, input ``index`` holds ``atom``'s value
    #: (``x += 1`` on a parameter is visible to the caller, as in NumPy).
    writebacks: tuple[tuple[int, Atom], ...] = ()
    #: Pairs ``(written, read)`` of arguments the kernel reads after it starts writing
    #: the other, found before fusion made statements into one loop (None: not yet;
    #: see :mod:`aotc.packaging.argument_order`).
    orders: tuple[tuple[int, int], ...] | None = None

    def replace(self, **changes: Any) -> Program:
        return replace(self, **changes)

    def __str__(self) -> str:
        """The program's text; then that of each function it calls (``def f$0 = {...}``:
        see :mod:`aotc.ops.calls`), which the text parser does not read back."""
        text = print_program(self)
        for callee in called_functions(self):
            if callee.program is not None:
                text += f"\ndef {callee.name} = {print_program(callee.program)}"
        return text


# -- printing ----------------------------------------------------------------------------
#
# The text is what :mod:`aotc.ir_text` parses back: every field of a program is printed
# (sizes read from the arguments, checks with their errors, writes, argument orders),
# strings are quoted, and a size param that would read as an int or a tuple is ``dim(...)``.

class _Names:
    def __init__(self) -> None:
        self.names: dict[Var, str] = {}

    def __call__(self, atom: Atom) -> str:
        if isinstance(atom, Lit):
            return str(atom)
        if atom not in self.names:
            n = len(self.names)
            name = ""
            while True:
                name = chr(ord("a") + n % 26) + name
                n = n // 26 - 1
                if n < 0:
                    break
            self.names[atom] = name
        return self.names[atom]


#: A size symbol printed bare (others are quoted); the words are the size syntax's own.
SYMBOL_NAME = re.compile(r"[A-Za-z_@$][\w.@$]*")
_DIM_WORDS = {"relu", "if", "else", "dim"}
#: Words a size param alone must not be printed as (they read as other values).
_VALUE_WORDS = {"True", "False", "None", "nan", "inf", *SHORT_NAMES.values()}


def symbol_text(name: str) -> str:
    return name if SYMBOL_NAME.fullmatch(name) and name not in _DIM_WORDS else repr(name)


def dim_text(d: DimExpr) -> str:
    """``str(d)``, except where that is ambiguous: a floor division that is not a term
    of its own is in parentheses (``3*(n // 2)``), an odd symbol name is quoted."""
    return d.format_terms(_dim_atom_text)


def _dim_atom_text(atom: Sym | Relu | FloorDiv | IfNeg, alone: bool) -> str:
    if isinstance(atom, Sym):
        return symbol_text(atom.name)
    if isinstance(atom, Relu):
        return f"relu({dim_text(atom.expr)})"
    if isinstance(atom, IfNeg):
        return f"({dim_text(atom.neg)} if {dim_text(atom.cond)} < 0 else {dim_text(atom.nonneg)})"
    inner = dim_text(atom.expr)
    text = f"({inner}) // {atom.divisor}" if len(atom.expr.terms) > 1 \
        else f"{inner} // {atom.divisor}"
    return text if alone else f"({text})"


def type_text(t: AType) -> str:
    return f"{SHORT_NAMES[t.dtype]}[{','.join(dim_text(d) for d in t.shape)}]"


def _param_text(value: Any, names: _Names, indent: str) -> str:
    if isinstance(value, Program):
        body = print_program(value, names, indent + "    ")
        return "{\n" + body + "\n" + indent + "  }"
    if isinstance(value, np.dtype):
        return SHORT_NAMES.get(value, str(value))
    if isinstance(value, tuple):
        return "(" + ",".join(_param_text(v, names, indent) for v in value) + \
            ("," if len(value) == 1 else "") + ")"
    if isinstance(value, DimExpr):
        text = dim_text(value)
        plain = not value.is_const and re.match(r"[-\w@$]", text) \
            and text.lstrip("-") not in _VALUE_WORDS
        return text if plain else f"dim({text})"
    if isinstance(value, str):
        return repr(str(value))
    if isinstance(value, (float, np.floating)):
        return scalar_text(np.float64(value))
    return str(value)


def _source_text(src: DimSource, program: Program, names: _Names, indent: str) -> str:
    """Where a size is read: ``a.shape[0]``, the value ``b``, or a program's result."""
    if src.program is None:
        arg = names(program.inputs[src.index]) if 0 <= src.index < len(program.inputs) \
            else f"arg{src.index}"
        return arg if src.axis is None else f"{arg}.shape[{src.axis}]"
    extra = {"errors": src.errors, "index": src.index, "axis": src.axis}
    given = {"errors": (), "index": -1, "axis": None}
    return _param_text(src.program, names, indent) + "".join(
        f" {k}={_param_text(v, names, indent)}" for k, v in extra.items() if v != given[k])


def implied_signed(src: DimSource) -> bool:
    """Whether a size symbol is signed, as the text says: one read from an integer
    argument's value or computed by a program is (one read from an axis is not)."""
    return src.program is not None or src.axis is None


def _all_dims(program: Program) -> Iterator[DimExpr]:
    for var in program.inputs:
        yield from var.type.shape
    for src in program.dim_sources:
        if src.program is not None:
            yield from _all_dims(src.program)
    for check in program.checks:
        yield from (check.lhs, check.rhs)
    for eqn in program.eqns:
        for var in eqn.outs:
            yield from var.type.shape
        for _, value in eqn.params:
            yield from _value_dims(value)


def _value_dims(value: Any) -> Iterator[DimExpr]:
    if isinstance(value, DimExpr):
        yield value
    elif isinstance(value, tuple):
        for v in value:
            yield from _value_dims(v)
    elif isinstance(value, Program):
        yield from _all_dims(value)


def _signedness(program: Program) -> list[str]:
    """Lines naming the symbols whose signedness the size lines do not imply."""
    implied = {src.symbol for src in program.dim_sources if implied_signed(src)}
    found: dict[str, bool] = {}
    for d in _all_dims(program):
        for atom in d.atoms():
            if isinstance(atom, Sym):
                found.setdefault(atom.name, atom.signed)
    signed = [n for n, s in found.items() if s and n not in implied]
    unsigned = [n for n, s in found.items() if not s and n in implied]
    return [f"{word} {' '.join(map(symbol_text, syms))}"
            for word, syms in (("signed", signed), ("unsigned", unsigned)) if syms]


def print_program(program: Program, names: _Names | None = None, indent: str = "") -> str:
    """Readable text of a program, one equation a line, with source locations;
    :func:`aotc.ir_text.parse_program` reads it back."""
    top = names is None
    names = names or _Names()
    ins = " ".join(f"{names(v)}:{type_text(v.type)}" for v in program.inputs)
    name = "" if program.name == "kernel" else f"{program.name!r} "
    lines = [f"{indent}{{ {name}lambda {ins} ."]
    lines += [f"{indent}  size {symbol_text(src.symbol)} = "
              f"{_source_text(src, program, names, indent)}" for src in program.dim_sources]
    if top:
        lines += [f"{indent}  {line}" for line in _signedness(program)]
    for check in program.checks:
        error = check.error if check.error.isidentifier() else repr(check.error)
        lines.append(f"{indent}  check {dim_text(check.lhs)} {check.op} {dim_text(check.rhs)} "
                     f"else {error}({check.message!r})")
    for eqn in program.eqns:
        outs = " ".join(f"{names(v)}:{type_text(v.type)}" for v in eqn.outs)
        params = " ".join(f"{k}={_param_text(v, names, indent)}" for k, v in eqn.params)
        head = eqn.prim.name + (f"[{params}]" if params else "")
        args = " ".join(names(a) for a in eqn.inputs)
        where = f"  # {eqn.loc}" if eqn.loc else ""
        assign = f"{outs} = " if outs else ""  # an effect (check, raise_if) defines nothing
        lines.append(f"{indent}  {assign}{head} {args}".rstrip() + where)
    outs = ", ".join(names(a) for a in program.outputs)
    for index, atom in program.writebacks:
        lines.append(f"{indent}  write {names(program.inputs[index])} <- {names(atom)}")
    if program.orders is not None:
        lines.append(f"{indent}  orders {_param_text(program.orders, names, indent)}")
    lines.append(f"{indent}  in ({outs}) }}")
    return "\n".join(lines)


# -- walking -----------------------------------------------------------------------------

def _param_dims(value: Any, guarded: bool) -> list[DimExpr]:
    if isinstance(value, DimExpr):
        return [value]
    if isinstance(value, tuple):
        return [d for v in value for d in _param_dims(v, guarded)]
    if isinstance(value, Program):
        return size_expressions(value, guarded)
    return []


def size_expressions(program: Program, guarded: bool = True) -> list[DimExpr]:
    """Every size expression a program computes with: the dims of every value's type and
    the sizes in equation params, each once, in order; with ``guarded`` false, not those
    of loop bodies and branches (which hold only where they run)."""
    found: dict[DimExpr, None] = {}
    for var in program.inputs:
        found.update(dict.fromkeys(var.type.shape))
    for eqn in program.eqns:
        for var in eqn.outs:
            found.update(dict.fromkeys(var.type.shape))
        if guarded or not eqn.prim.has(GUARDED):
            for _, value in eqn.params:
                found.update(dict.fromkeys(_param_dims(value, guarded)))
    return list(found)


def nested_programs(eqn: Eqn) -> list[Program]:
    """Every program in ``eqn``'s params (loop bodies, conditions, branches)."""
    found: list[Program] = []
    for _, value in eqn.params:
        found += [v for v in (value if isinstance(value, tuple) else (value,))
                  if isinstance(v, Program)]
    return found


def has_effect(eqn: Eqn) -> bool:
    """Whether the equation may raise (a ``raise_if``/``check``, or one inside a body) or
    binds a size symbol: it must run even when nothing reads its outputs."""
    return eqn.prim.has(EFFECT) or any(has_effect(e) for p in nested_programs(eqn)
                                       for e in p.eqns)


def is_stateful(eqn: Eqn) -> bool:
    """Whether the equation (or one in its bodies) advances the random state: equal
    ones are not the same value."""
    return eqn.prim.has(STATEFUL) or any(is_stateful(e) for p in nested_programs(eqn)
                                         for e in p.eqns)


def bound_uppers(*programs: Program) -> dict[str, DimExpr]:
    """The size symbols these programs (and those nested in them) bind while they run,
    each with its upper bound (see :data:`~aotc.shapes.BOUND_PREFIX`)."""
    found: dict[str, DimExpr] = {}
    for program in programs:
        for eqn in program.eqns:
            if eqn.prim is bind_dim_p:
                found[eqn.params["symbol"]] = eqn.params["upper"]
            found.update(bound_uppers(*nested_programs(eqn)))
    return found


def returned_arguments(program: Program) -> dict[int, int]:
    """Outputs that are an array argument itself, as the kernel left it (``return a``,
    after writing into ``a`` or not): output index -> argument index. The caller gets
    that argument object back, as from the uncompiled function, not a copy."""
    final = {atom: i for i, atom in program.writebacks}
    for i, var in enumerate(program.inputs):
        if var.type.ndim and i not in final.values():
            final[var] = i
    found: dict[int, int] = {}
    for j, atom in enumerate(program.outputs):
        if isinstance(atom, Var) and atom in final and atom.type.ndim \
                and final[atom] not in found.values():
            found[j] = final[atom]
    return found


def runs_loops(program: Program) -> bool:
    """Whether the program runs a loop whose trip count is only known at run time."""
    return any(eqn.prim.has(LOOP) or any(runs_loops(p) for p in nested_programs(eqn))
               for eqn in program.eqns)


def called_functions(program: Program) -> list[Any]:
    """The :class:`~aotc.ops.calls.Callee` s that ``call`` equations of ``program`` (and
    of its nested programs) call, and those they call, each once, in order."""
    found: dict[int, Any] = {}

    def visit(p: Program) -> None:
        for eqn in p.eqns:
            callee = eqn.params["callee"] if eqn.prim is call_p else None
            if callee is not None and id(callee) not in found:
                found[id(callee)] = callee
                if callee.program is not None:  # (None while it is being traced)
                    visit(callee.program)
            for nested in nested_programs(eqn):
                visit(nested)
    visit(program)
    return list(found.values())


def runtime_errors(program: Program) -> tuple[tuple[str, str], ...]:
    """The distinct (exception, message) pairs the program's ``raise_if`` and ``check``
    equations raise, nested programs and the functions it calls included, in order: the
    kernel's error table (the code of entry ``k`` is ``abi.FIRST_PROGRAM_ERROR + k``)."""
    found = dict.fromkeys(_own_errors(program))
    for callee in called_functions(program):
        if callee.program is not None:
            found.update(dict.fromkeys(_own_errors(callee.program)))
    return tuple(found)


def raised_errors(eqns: Sequence[Eqn]) -> tuple[tuple[str, str], ...]:
    """:func:`runtime_errors` of some equations (part of a program being traced)."""
    return runtime_errors(Program((), tuple(eqns), ()))


def _own_errors(program: Program) -> tuple[tuple[str, str], ...]:
    found: dict[tuple[str, str], None] = {}
    for eqn in program.eqns:
        error, message = eqn.params.get("error"), eqn.params.get("message")
        if eqn.prim.has(EFFECT) and error is not None and message is not None:
            found[(error, message)] = None
        for nested in nested_programs(eqn):
            found.update(dict.fromkeys(_own_errors(nested)))
    return tuple(found)


def value_types(program: Program, guarded: bool = True) -> list[AType]:
    """The distinct types of every value of a program and its nested programs; with
    ``guarded`` false, not those of loop bodies and branches (fusion bodies count)."""
    found: dict[AType, None] = dict.fromkeys(v.type for v in program.inputs)
    for eqn in program.eqns:
        found.update(dict.fromkeys(v.type for v in eqn.outs))
        if guarded or not eqn.prim.has(GUARDED):
            for body in nested_programs(eqn):
                found.update(dict.fromkeys(value_types(body, guarded)))
    return list(found)


# -- checking ----------------------------------------------------------------------------

class VerifyError(Exception):
    """The IR is malformed: a pass has a bug."""


def verify(program: Program) -> None:
    """Check SSA form and that each equation's outputs match its primitive's type rule."""
    defined: set[Var] = set(program.inputs)
    for eqn in program.eqns:
        for a in eqn.inputs:
            if isinstance(a, Var) and a not in defined:
                raise VerifyError(f"{eqn.prim.name}: input {a} used before definition")
        rule = type_rules.get(eqn.prim)
        if rule is None:
            raise VerifyError(f"primitive {eqn.prim.name} has no type rule")
        expected = rule(*(a.type for a in eqn.inputs), **dict(eqn.params))
        got = tuple(v.type for v in eqn.outs)
        if tuple(expected) != got:
            raise VerifyError(
                f"{eqn.prim.name} at {eqn.loc}: outputs {', '.join(map(str, got))} but the "
                f"type rule gives {', '.join(map(str, expected))}"
            )
        for _, value in eqn.params:
            for nested in value if isinstance(value, tuple) else (value,):
                if isinstance(nested, Program):
                    verify(nested)
        for v in eqn.outs:
            if v in defined:
                raise VerifyError(f"{eqn.prim.name}: {v} defined twice")
            defined.add(v)
    for a in list(program.outputs) + [a for _, a in program.writebacks]:
        if isinstance(a, Var) and a not in defined:
            raise VerifyError(f"output {a} is never defined")
    for index, atom in program.writebacks:
        if atom.type != program.inputs[index].type:
            raise VerifyError(f"write into input {index} has type {atom.type}")
