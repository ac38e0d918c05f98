"""Convert kernels so their Python traces (see ``transform`` and ``runtime``).

:func:`convert` returns a function with the same signature whose ``for``, ``while``
and ``if`` statements call :mod:`aotc.autograph.runtime`, and whose every call goes
through ``runtime.call`` (AutoGraph's *converted call*): NumPy's creation functions
become traced ones whatever name they were imported under, ``numpy.random`` is a clear
error, and the user's own helper functions are converted in turn when called. Functions
whose source cannot be read (builtins, code made by ``exec``) are returned unchanged.

Source is found by parsing the whole file the code object names and picking the
function (or lambda) it was compiled from, so decorators, nesting and lambdas inside
larger expressions need no special care, and line and column numbers stay the user's.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import linecache
import sys
import types
from collections.abc import Callable
from typing import Any, cast

from ..errors import Loc, TraceError
from . import runtime
from .closures import LATE, bind_late
from .generators import collect_yields
from .passed_back import Changes, ChangesOf, changes_per_parameter
from .pymodules import source_of
from .syntax import parameters, walk_code
from .transform import RUNTIME, convert_function

_CACHE: dict[Callable[..., Any], Callable[..., Any]] = {}
#: Converted code per code object: closures made by one ``def`` share it.
_CODE: dict[tuple[types.CodeType, Any], tuple[types.CodeType, str] | None] = {}
_FILES: dict[tuple[str, int], _Index | None] = {}

FunctionNode = ast.FunctionDef | ast.Lambda


class _Index:
    """A parsed file, with its functions by name and its lambdas by line."""

    def __init__(self, tree: ast.Module) -> None:
        self.functions: dict[str, list[ast.FunctionDef]] = {}
        self.lambdas: dict[int, list[ast.Lambda]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                self.functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Lambda):
                self.lambdas.setdefault(node.lineno, []).append(node)


def _module_index(filename: str) -> _Index | None:
    """The parsed source of a whole file (cached by its length, which linecache tracks)."""
    lines = linecache.getlines(filename)
    key = (filename, sum(map(len, lines)))
    if key not in _FILES:
        try:
            _FILES[key] = _Index(ast.parse("".join(lines))) if lines else None
        except SyntaxError:
            _FILES[key] = None
    return _FILES[key]


def _body_columns(code: types.CodeType) -> set[tuple[int, int]]:
    """(line, column) of the code's instructions: where its body is in the source."""
    return {(line, col) for line, _, col, _ in code.co_positions()
            if line is not None and col is not None and (line, col) != (code.co_firstlineno, 0)}


def _contains(node: ast.expr, line: int, col: int) -> bool:
    end_line = node.end_lineno or node.lineno
    end_col = node.end_col_offset if node.end_col_offset is not None else 1 << 30
    return (node.lineno, node.col_offset) <= (line, col) < (end_line, end_col)


def _find(code: types.CodeType, name: str) -> FunctionNode | None:
    index = _module_index(code.co_filename)
    if index is None:
        return None
    first = code.co_firstlineno
    if name == "<lambda>":
        spots = _body_columns(code)
        hits = [n for n in index.lambdas.get(first, [])
                if any(_contains(n.body, *s) for s in spots)]
        hits.sort(key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))  # innermost first
        return hits[0] if hits else None
    for node in index.functions.get(name, []):
        if first in [node.lineno] + [d.lineno for d in node.decorator_list]:
            return node
    return None


def _source(fn: types.FunctionType) -> FunctionNode | None:
    """``fn``'s definition, as the code that made it has it: a nested function the
    enclosing kernel binds late (:mod:`.closures`) with its leading parameters."""
    node = _find(fn.__code__, fn.__code__.co_name)
    late = getattr(fn, LATE, None)
    if node is not None and late is not None:
        node = copy.deepcopy(node)
        bind_late(node, *late)
    return node


def _as_function(node: FunctionNode) -> ast.FunctionDef:
    """A detached ``def`` to convert (a lambda becomes one returning its expression)."""
    if isinstance(node, ast.Lambda):
        body: list[ast.stmt] = [ast.copy_location(ast.Return(copy.deepcopy(node.body)), node.body)]
        fn = ast.FunctionDef(name="__aotc_lambda", args=copy.deepcopy(node.args), body=body,
                             decorator_list=[], returns=None)
        if sys.version_info >= (3, 12):
            fn.type_params = []
        return ast.copy_location(fn, node)
    return copy.deepcopy(node)


def _refuse_nonlocal(node: FunctionNode, filename: str) -> None:
    """A helper that rebinds its enclosing function's variables (``nonlocal``): its
    changes could not reach the enclosing kernel's loops, so say so at the statement."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Nonlocal):
            raise TraceError(
                f"'nonlocal {', '.join(sub.names)}': a function in a kernel cannot rebind "
                "its enclosing function's variables",
                loc=Loc(filename, sub.lineno, sub.col_offset, sub.end_col_offset or -1),
                hint="return the new value and assign it where the function is called")


#: How each function changes the lists, sets and dicts it is given (None while it is
#: being found: a recursion changes nothing more).
_CHANGES: dict[tuple[types.CodeType, str], dict[int, Changes] | None] = {}


def _changes_of(namespace: dict[str, Any]) -> ChangesOf:
    """How each function named in ``namespace`` changes its arguments in place (see
    :mod:`.passed_back`)."""
    def changes_of(name: str) -> dict[int, Changes]:
        first, *attributes = name.split(".")
        value = namespace.get(first)
        for attribute in attributes:
            value = getattr(value, attribute, None)
        source = source_of(value)
        if attributes and source is None:
            return {}  # (a method, or a library's function: not read for changes)
        value = source or value
        if not isinstance(value, types.FunctionType):
            return {}
        key = (value.__code__, repr(getattr(value, LATE, None)))
        if key not in _CHANGES:
            _CHANGES[key] = None
            node = _source(value)
            _CHANGES[key] = changes_per_parameter(node, _changes_of(value.__globals__)) \
                if isinstance(node, ast.FunctionDef) else {}
        return _CHANGES[key] or {}
    return changes_of


def _converted_code(fn: types.FunctionType, namespace: dict[str, Any]
                    ) -> tuple[types.CodeType, str] | None:
    """The compiled module defining the converted function, and that function's name
    (``namespace``: the names it sees, for the functions it calls)."""
    code = fn.__code__
    key = (code, repr(getattr(fn, LATE, None)))
    if key not in _CODE:
        node = _source(fn)
        if node is None:
            _CODE[key] = None
        else:
            _refuse_nonlocal(node, code.co_filename)
            collect_yields(node, code.co_filename)
            tree = convert_function(_as_function(node), _changes_of(namespace))
            # Defaults were evaluated where the function was defined: keep those values
            # (set on the function), not expressions naming the enclosing function's locals.
            args = tree.args
            args.defaults = [ast.Constant(None) for _ in args.defaults]
            args.kw_defaults = [None if d is None else ast.Constant(None)
                                for d in args.kw_defaults]
            module = ast.fix_missing_locations(ast.Module([tree], []))
            _CODE[key] = (compile(module, code.co_filename, "exec"), tree.name)
    return _CODE[key]


def convert(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` converted (cached per function); ``fn`` itself when it cannot be."""
    fn = getattr(fn, "__aotc_unchecked__", fn)  # an exported kernel: not its arg checks
    if fn in _CACHE:
        return _CACHE[fn]
    _CACHE[fn] = fn  # a guard against recursion while converting
    if not isinstance(fn, types.FunctionType):
        return fn
    namespace: dict[str, Any] = dict(fn.__globals__)
    namespace[RUNTIME] = runtime
    if fn.__closure__:
        for free, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
            with contextlib.suppress(ValueError):  # an empty cell: the name is not bound yet
                namespace[free] = cell.cell_contents
    try:
        compiled = _converted_code(fn, namespace)
    except TraceError:
        del _CACHE[fn]  # refused (a located error): refused again next time, not run as is
        raise
    if compiled is None:
        return fn
    module_code, name = compiled
    exec(module_code, namespace)
    converted = namespace[name]
    converted.__defaults__ = fn.__defaults__
    converted.__kwdefaults__ = fn.__kwdefaults__
    converted.__wrapped__ = fn
    converted.__name__ = fn.__name__
    if hasattr(fn, LATE):  # (the name it calls itself by is bound to it, converted)
        setattr(converted, LATE, getattr(fn, LATE))
    _CACHE[fn] = converted
    return cast(Callable[..., Any], converted)


#: List methods that change a list's length in place.
_RESIZING = frozenset({"append", "extend", "insert", "pop", "remove", "clear"})


def resized_parameters(fn: Callable[..., Any]) -> frozenset[str]:
    """The parameters of ``fn`` whose list it resizes in place (``lst.append(v)``,
    ``del lst[k]``): a compiled function cannot change the size of an array it is
    given, so such a recursion is refused rather than losing the caller's appends."""
    node = _source(fn) if isinstance(fn, types.FunctionType) else None
    if node is None:
        return frozenset()
    params = set(parameters(node))
    found: set[str] = set()
    for sub in ast.walk(node):
        target: ast.expr | None = None
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
                and sub.func.attr in _RESIZING:
            target = sub.func.value
        elif isinstance(sub, ast.Delete) and len(sub.targets) == 1 \
                and isinstance(sub.targets[0], ast.Subscript):
            target = sub.targets[0].value
        if isinstance(target, ast.Name) and target.id in params:
            found.add(target.id)
    return frozenset(found)


def returned_tuple_length(fn: Callable[..., Any]) -> int | None:
    """How many items ``fn`` returns when each of its ``return`` statements gives a
    tuple display of one length (``return b, a + b``): a recursive call's result is
    first guessed to be a tuple of that many numbers."""
    node = _source(fn) if isinstance(fn, types.FunctionType) else None
    if node is None or isinstance(node, ast.Lambda):
        return None
    lengths = {len(sub.value.elts) if isinstance(sub.value, ast.Tuple) and not any(
                   isinstance(e, ast.Starred) for e in sub.value.elts) else None
               for stmt in node.body for sub in walk_code(stmt) if isinstance(sub, ast.Return)}
    return lengths.pop() if len(lengths) == 1 else None


runtime.converter = convert  # runtime.call converts helpers it meets
runtime.resized_parameters = resized_parameters
runtime.returned_tuple_length = returned_tuple_length

__all__ = ["convert", "runtime"]
