"""Reading IR text back: :func:`parse_program` inverts :func:`aotc.ir.print_program`.

Why: a pass test is then a text file (the program before, the passes, the program
after) instead of Python that builds equations one by one, and a kernel's IR saved by
``python -m aotc inspect --save-ir`` can be replayed through any passes with
``python -m aotc opt``. ``print_program(parse_program(text)) == text`` for every printed
program: a name always means the same variable (nested programs that share variables
with their kernel share them again), params come back as the values they were (ints,
floats, strings, dtypes, sizes, tuples, programs), and a size symbol is signed where
the size lines say so (read from an integer argument's value or computed), or where a
``signed`` line lists it. What the text does not hold is a source location's column.

Malformed text raises :class:`IRSyntaxError`, a ``ValueError`` naming the line and
column, with the line and a caret under the place.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from .errors import Loc
from .ir import Atom, Check, DimSource, Eqn, Lit, Params, Program, Var
from .ops import ALL_PRIMITIVES
from .ops.calls import Callee, call_p
from .ops.core import COMPARE
from .shapes import Atom as SizeAtom
from .shapes import DimExpr, FloorDiv, IfNeg, Relu, Sym
from .tracing.avals import AType
from .types import SHORT_NAMES

DTYPES = {name: dtype for dtype, name in SHORT_NAMES.items()}
F64 = np.dtype("f8")
T = TypeVar("T")

_NUM = r"(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf)"
_TOKEN = re.compile(rf"""[ \t\r]*(?:
    (?P<newline>\n) | (?P<comment>\#[^\n]*)
  | (?P<string>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
  | (?P<number>\([-+]?{_NUM}[-+]{_NUM}j\)|0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?j?)
  | (?P<name>[A-Za-z_@$][\w.@$]*)
  | (?P<op>//|<-|==|>=|<=|[-+*<=()\[\]{{}},.:]) | (?P<bad>\S))
""", re.VERBOSE)
_STATEMENTS = {"size", "signed", "unsigned", "check", "write", "orders"}


class IRSyntaxError(ValueError):
    """IR text that does not parse: the message names the line and column."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        self.line = text.count("\n", 0, pos) + 1
        start = text.rfind("\n", 0, pos) + 1
        self.column = pos - start + 1
        source = text[start:].partition("\n")[0]
        super().__init__(f"line {self.line}, column {self.column}: {message}\n    {source}\n"
                         f"    {' ' * (self.column - 1)}^")


def parse_program(text: str) -> Program:
    """The program ``text`` prints (see :func:`aotc.ir.print_program`)."""
    return _Parser(text).top()


def _unquote(kind: str, text: str) -> str:
    return ast.literal_eval(text) if kind == "string" else text


class _Parser:
    def __init__(self, text: str) -> None:
        self.source = text
        found = [(kind := str(m.lastgroup), m.group(kind), m.start(kind))
                 for m in _TOKEN.finditer(text)]
        found.append(("end", "end of text", len(text)))
        self.kinds: list[str] = [kind for kind, _, _ in found]
        self.texts: list[str] = [text for _, text, _ in found]
        self.starts: list[int] = [start for _, _, start in found]
        if "bad" in self.kinds:
            self.i = self.kinds.index("bad")
            raise self.error(f"unexpected character {self.text!r}")
        self.i = 0
        self.signed = self.signed_symbols()
        self.vars: dict[str, Var] = {}  # a name is one variable in a program and its bodies
        self.callees: dict[str, Callee] = {}  # functions called, by name (aotc.ops.calls)
        self.scope: set[Var] = set()  # those the program being read has defined

    # -- tokens ---------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return self.kinds[self.i]

    @property
    def text(self) -> str:
        return self.texts[self.i]

    def peek(self, k: int = 1) -> str:
        return self.texts[min(self.i + k, len(self.texts) - 1)]

    def error(self, message: str, at: int | None = None) -> IRSyntaxError:
        return IRSyntaxError(message, self.source, self.starts[self.i if at is None else at])

    def take(self, kind: str | None = None, text: str | None = None) -> str:
        if (kind and self.kind != kind) or (text and self.text != text):
            want = repr(text) if text else {"name": "a name", "number": "a number",
                                             "string": "a quoted string",
                                             "end": "the end of the text"}.get(kind or "", kind)
            raise self.error(f"expected {want}, found {self.text!r}")
        self.i += 1
        return self.texts[self.i - 1]

    def accept(self, text: str) -> bool:
        if self.text == text and self.kind in ("op", "name"):
            self.i += 1
            return True
        return False

    def skip_lines(self, comments: bool = False) -> None:
        while self.kind == "newline" or (comments and self.kind == "comment"):
            self.i += 1

    def signed_symbols(self) -> set[str]:
        """Symbols the outermost program's size lines make signed (an integer argument's
        value or a computed size: :func:`aotc.ir.implied_signed`) or its ``signed`` line
        lists, less those its ``unsigned`` line lists: known before any size is read."""
        signed: set[str] = set()
        unsigned: set[str] = set()
        kinds, texts, depth = self.kinds, self.texts, 0
        for i in range(len(texts) - 4):
            depth += {"{": 1, "}": -1}.get(texts[i], 0) if kinds[i] == "op" else 0
            if not i or kinds[i] != "name" or kinds[i - 1] != "newline" or depth != 1:
                continue
            if texts[i] == "size" and texts[i + 2] == "=" and (texts[i + 3] == "{" or (
                    kinds[i + 3] == "name" and not texts[i + 3].endswith(".shape"))):
                signed.add(_unquote(kinds[i + 1], texts[i + 1]))
            elif texts[i] in ("signed", "unsigned") and texts[i + 1] != ":":
                k = i + 1
                while kinds[k] in ("name", "string"):
                    (signed if texts[i] == "signed" else unsigned).add(
                        _unquote(kinds[k], texts[k]))
                    k += 1
        return signed - unsigned

    # -- programs -------------------------------------------------------------------
    def top(self) -> Program:
        self.skip_lines(comments=True)
        program = self.program()
        self.skip_lines(comments=True)
        while self.kind == "name" and self.text == "def":  # the functions it calls
            self.i += 1
            at, name = self.i, self.symbol()
            self.take("op", "=")
            callee = self.callee(name, at)
            self.vars = {}  # (each function names its variables afresh)
            callee.program = self.program()
            callee.results = tuple(v.type for v in callee.program.outputs)
            callee.sizes = {src.symbol: (src.index, src.axis or 0)
                            for src in callee.program.dim_sources}
            self.skip_lines(comments=True)
        self.take("end")
        missing = [n for n, c in self.callees.items() if c.program is None]
        if missing:
            raise self.error(f"a call of {missing[0]!r}, which no 'def' defines")
        return program

    def callee(self, name: str, at: int) -> Callee:
        """The function called ``name`` (one object for every call and its ``def``)."""
        if name not in self.callees:
            self.callees[name] = Callee(name, (AType(np.dtype(bool), ()),))
        elif self.callees[name].program is not None and self.texts[at - 1] == "def":
            raise self.error(f"a second 'def' of {name!r}", at)
        return self.callees[name]

    def program(self) -> Program:
        outer, self.scope = self.scope, set()
        self.take("op", "{")
        name = self.symbol() if self.kind == "string" else "kernel"
        self.take("name", "lambda")
        inputs = []
        while self.kind == "name":
            inputs.append(self.declare())
        self.take("op", ".")
        parts: dict[str, list[Any]] = {"size": [], "check": [], "eqn": [], "write": []}
        orders: tuple[tuple[int, int], ...] | None = None
        while True:
            self.skip_lines(comments=True)
            word, after = self.text, self.peek()
            if word == "in" and after == "(":
                break
            if self.kind == "end":
                raise self.error("the program ends without 'in (...) }'")
            if self.kind != "name" or word not in _STATEMENTS or after in ("[", ":"):
                parts["eqn"].append(self.eqn())
            elif word == "size":
                parts["size"].append(self.size(inputs))
            elif word == "check":
                parts["check"].append(self.check())
            elif word == "write":
                self.i += 1
                at, var = self.i, self.atom()
                if not isinstance(var, Var) or var not in inputs:
                    raise self.error(f"write into {self.texts[at]}, which is not an input of "
                                     "this program", at)
                self.take("op", "<-")
                parts["write"].append((inputs.index(var), self.atom()))
            elif word == "orders":
                self.i += 1
                orders = self.value()
            else:  # signed, unsigned: read before (see signed_symbols)
                self.i += 1
                while self.kind in ("name", "string"):
                    self.i += 1
            if self.kind not in ("newline", "end"):
                raise self.error(f"expected the end of the line, found {self.text!r}")
        self.take("name", "in")
        self.take("op", "(")
        outputs = self.listed(")", self.atom)
        self.take("op", "}")
        self.scope = outer
        return Program(tuple(inputs), tuple(parts["eqn"]), tuple(outputs),
                       tuple(parts["size"]), tuple(parts["check"]), name,
                       tuple(parts["write"]), orders)

    def declare(self, define: bool = True) -> Var:
        """``name:type``: the variable of that name (one already met must have the type)."""
        at, name = self.i, self.take("name")
        self.take("op", ":")
        typ = self.type()
        var = self.vars.setdefault(name, Var(typ))
        if var.type != typ:
            raise self.error(f"'{name}' was declared {var.type} before, here {typ}", at)
        if var in self.scope:
            raise self.error(f"'{name}' is defined twice", at)
        if define:
            self.scope.add(var)
        return var

    def type(self) -> AType:
        dtype = self.dtype()
        self.take("op", "[")
        return AType(dtype, tuple(self.listed("]", self.dim)))

    def listed(self, close: str, item: Callable[[], T]) -> list[T]:
        """Items separated by commas up to ``close`` (the opening one read)."""
        found: list[T] = []
        while not self.accept(close):
            found.append(item())
            if self.text != close:
                self.take("op", ",")
        return found

    def integer(self) -> int:
        at, text = self.i, self.take("number")
        if not text.isdigit():
            raise self.error(f"expected a whole number, found {text!r}", at)
        return int(text)

    def dtype(self) -> np.dtype:
        if self.text not in DTYPES:
            raise self.error(f"unknown dtype {self.text!r} (known: {', '.join(DTYPES)})")
        return DTYPES[self.take()]

    def size(self, inputs: list[Var]) -> DimSource:
        self.take("name", "size")
        symbol = self.symbol()
        self.take("op", "=")
        if self.text == "{":
            program = self.nested()
            extra = dict(self.params(("errors", "index", "axis")))
            return DimSource(symbol, extra.get("index", -1), extra.get("axis"), program,
                             extra.get("errors", ()))
        at = self.i
        arg, dot, rest = self.take("name").partition(".shape")
        var = self.vars.get(arg)
        if var not in inputs or rest:
            raise self.error(f"expected an input of this program, found {self.texts[at]!r}",
                             at)
        axis = None
        if dot:
            self.take("op", "[")
            axis = self.integer()
            self.take("op", "]")
        return DimSource(symbol, inputs.index(var), axis)

    def check(self) -> Check:
        self.take("name", "check")
        lhs = self.dim()
        if self.text not in COMPARE:
            raise self.error(f"expected one of {', '.join(COMPARE)}, found {self.text!r}")
        op = self.take()
        rhs = self.dim()
        self.take("name", "else")
        error = self.symbol()
        self.take("op", "(")
        message = _unquote("string", self.take("string"))
        self.take("op", ")")
        return Check(op, lhs, rhs, error, message)

    def eqn(self) -> Eqn:
        outs = []
        while self.kind == "name" and self.peek() == ":":
            outs.append(self.declare(define=False))
        if outs:
            self.take("op", "=")
        prim = ALL_PRIMITIVES.get(self.text)
        if prim is None or self.kind != "name":
            raise self.error(f"unknown primitive {self.text!r}")
        self.i += 1
        if prim is call_p:  # call[callee=NAME ...]: the function, defined after the program
            self.take("op", "[")
            self.take("name", "callee")
            self.take("op", "=")
            at = self.i
            callee = self.callee(self.symbol(), at)
            params = Params.of({"callee": callee, **dict(self.params())})
        else:
            params = Params(self.params() if self.accept("[") else ())
        inputs = []
        while self.kind not in ("newline", "comment", "end"):
            inputs.append(self.atom())
        self.scope.update(outs)  # defined once the inputs are read
        loc = None
        if self.kind == "comment":
            file, _, line = self.text[1:].strip().rpartition(":")
            if not file or not re.fullmatch(r"-?\d+", line):
                raise self.error("expected a source location 'file:line' after '#'")
            loc = Loc(file, int(line))
            self.i += 1
        return Eqn(prim, tuple(inputs), params, tuple(outs), loc)

    def nested(self) -> Program:
        self.take("op", "{")
        self.skip_lines()
        program = self.program()
        self.skip_lines()
        self.take("op", "}")
        return program

    def params(self, keys: tuple[str, ...] | None = None) -> tuple[tuple[str, Any], ...]:
        """``key=value ...`` up to ``]`` (an equation's), or to the end of the line
        (those of ``keys``)."""
        found: dict[str, Any] = {}
        while True:
            if keys is None:
                self.skip_lines()
                if self.accept("]"):
                    break
            elif self.kind in ("newline", "end"):
                break
            if self.kind != "name" or self.peek() != "=":
                raise self.error(f"expected {'key=value' if keys else repr(']')}, found "
                                 f"{self.text!r}")
            at, key = self.i, self.take("name")
            if key in found or (keys is not None and key not in keys):
                raise self.error(f"param {key!r} given twice" if key in found
                                 else f"unexpected param {key!r}", at)
            self.take("op", "=")
            found[key] = self.value()
        return tuple(found.items())

    # -- values ---------------------------------------------------------------------
    def atom(self) -> Atom:
        """A variable defined in this program, or a literal ``value:dtype``."""
        at = self.i
        if self.peek() == ":" or self.text == "-":
            text = "-" if self.accept("-") else ""
            text += self.take()
            self.take("op", ":")
            dtype = self.dtype()
            try:
                return Lit(_scalar(text, dtype), dtype)
            except (ValueError, OverflowError) as err:
                raise self.error(f"{text!r} is not a {self.texts[self.i - 1]} value ({err})",
                                 at) from None
        var = self.vars.get(self.take("name"))
        if var is None or var not in self.scope:
            raise self.error(f"'{self.texts[at]}' is not defined in this program", at)
        return var

    def value(self) -> Any:
        """A param: a program, tuple, string, number, bool, None, dtype or size."""
        start = self.i
        if self.text == "{":
            return self.nested()
        if self.accept("("):
            return tuple(self.listed(")", self.value))
        if self.kind == "string":
            return self.symbol()
        if self.kind == "name" and self.peek() not in ("*", "+", "-", "//"):
            if self.text in _WORDS or self.text in DTYPES:
                word = self.take()
                return _WORDS[word] if word in _WORDS else DTYPES[word]
            if self.text == "dim" and self.peek() == "(":
                self.i += 2
                dim = self.dim()
                self.take("op", ")")
                return dim
        sign = "-" if self.accept("-") else ""
        if self.kind == "number" or self.text in ("nan", "inf"):
            number = sign + self.take()
            if self.text not in ("*", "+", "-", "//"):  # else a size: 2*n, or nan + 1
                try:
                    return float(_scalar(number, F64)) if re.search(r"[.eEnx]", number) \
                        else int(number)
                except ValueError:
                    raise self.error(f"{number!r} is not a number", start) from None
        self.i = start
        return self.dim()

    # -- sizes ----------------------------------------------------------------------
    def symbol(self) -> str:
        kind = self.kind
        return _unquote(kind, self.take("string" if kind == "string" else "name"))

    def dim(self) -> DimExpr:
        """A size as :func:`aotc.ir.dim_text` prints it, rebuilt term by term."""
        terms = [self.term(self.accept("-"))]
        while self.text in ("+", "-") and self.kind == "op":
            minus = self.take() == "-"
            coeff, mono = self.term(self.accept("-"))
            terms.append((-coeff if minus else coeff, mono))
        return DimExpr(tuple((mono, c) for c, mono in terms if c))

    def term(self, negative: bool) -> tuple[int, tuple[SizeAtom, ...]]:
        """``[k*]atom*atom...``, where ``//`` divides all of it so far (as in Python)."""
        coeff, mono = -1 if negative else 1, cast(tuple[SizeAtom, ...], ())
        while True:
            at, text = self.i, self.text
            if self.kind == "number" and text.isdigit():
                self.i += 1
                coeff *= int(text)
            elif self.accept("("):
                inner = self.dim()
                if self.accept("if"):  # (neg if cond < 0 else nonneg)
                    cond = self.dim()
                    self.take("op", "<")
                    self.take("number", "0")
                    self.take("name", "else")
                    mono += (IfNeg(cond, inner, self.dim()),)
                    self.take("op", ")")
                else:
                    self.take("op", ")")
                    if len(inner.terms) == 1 and inner.terms[0][1] == 1 \
                            and len(inner.terms[0][0]) == 1:
                        mono += inner.terms[0][0]  # (n // 2): one atom
                    elif self.text == "//" and not mono and abs(coeff) == 1:
                        inner = inner if coeff == 1 else -inner
                        coeff, mono = 1, (FloorDiv(inner, self.divisor()),)
                    else:
                        raise self.error("a parenthesized sum must be floor-divided: "
                                         "(a + b) // k", at)
            elif text == "relu" and self.peek() == "(":
                self.i += 2
                mono += (Relu(self.dim()),)
                self.take("op", ")")
            elif self.kind in ("name", "string") and text not in ("if", "else"):
                name = self.symbol()
                mono += (Sym(name, name in self.signed),)
            else:
                raise self.error(f"expected a size, found {text!r}")
            while self.text == "//":
                coeff, mono = 1, (FloorDiv(DimExpr(((mono, coeff),)), self.divisor()),)
            if not self.accept("*"):
                return coeff, mono

    def divisor(self) -> int:
        self.take("op", "//")
        at, value = self.i, self.integer()
        if value <= 0:
            raise self.error("a size divides only by a positive integer", at)
        return value


_WORDS = {"True": True, "False": False, "None": None}


def _scalar(text: str, dtype: np.dtype) -> Any:
    """A literal's value: Python's repr of the scalar, or its bytes in hex."""
    if text.startswith("0x") and dtype.kind in "fc":
        data = bytes.fromhex(text[2:])
        if len(data) != dtype.itemsize:
            raise ValueError(f"{len(data)} bytes for {dtype.itemsize}")
        return np.frombuffer(data, dtype)[0]
    if dtype.kind == "b":
        if text not in ("True", "False"):
            raise ValueError("a bool is True or False")
        return text == "True"
    if dtype.kind in "iu":
        value, info = int(text), np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"out of range [{info.min}, {info.max}]")
        return value
    return complex(text) if dtype.kind == "c" else float(text)
