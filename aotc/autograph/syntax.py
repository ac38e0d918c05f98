"""Small builders of the AST that converted code is made of.

Converted code reaches its runtime (:mod:`aotc.autograph.runtime`) under one name,
:data:`RUNTIME`, bound in the namespace each converted function is executed in.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterable

RUNTIME = "__aotc__"
#: Names the conversions introduce start with this; the user's code cannot clash.
HIDDEN = "__aotc_"


def load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def store(name: str) -> ast.Name:
    return ast.Name(name, ast.Store())


def runtime_call(attr: str, *args: ast.expr, keywords: Iterable[ast.keyword] = ()) -> ast.Call:
    """``__aotc__.attr(*args)``."""
    return ast.Call(ast.Attribute(load(RUNTIME), attr, ast.Load()), list(args), list(keywords))


def is_runtime_call(node: ast.AST) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
        and func.value.id == RUNTIME


def thunk(expr: ast.expr) -> ast.Lambda:
    """``lambda: expr``: an expression the runtime evaluates only if it must."""
    return ast.copy_location(ast.Lambda(arguments(), expr), expr)


def arguments(*names: str) -> ast.arguments:
    return ast.arguments([], [ast.arg(n) for n in names], None, [], [], None, [])


def function(name: str, params: list[str], body: list[ast.stmt]) -> ast.FunctionDef:
    fn = ast.FunctionDef(name=name, args=arguments(*params), body=body, decorator_list=[],
                         returns=None)
    if sys.version_info >= (3, 12):
        fn.type_params = []
    return fn


def assign(name: str, value: ast.expr, like: ast.AST) -> ast.Assign:
    return ast.copy_location(ast.Assign([store(name)], value), like)


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
               positional: bool = False) -> list[str]:
    """The names of a function's parameters, in order (``positional``: those a call can
    pass by position only; ``*args`` and ``**kwargs`` are not among them)."""
    args = fn.args
    return [a.arg for a in (*args.posonlyargs, *args.args,
                            *([] if positional else args.kwonlyargs))]


def walk_code(node: ast.AST) -> Iterable[ast.AST]:
    """``ast.walk`` that does not enter nested functions or lambdas (their returns, breaks
    and local names are their own)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from walk_code(child)


def rewrite_blocks(node: ast.AST, rewrite: Callable[[ast.stmt], list[ast.stmt]]) -> None:
    """Replace each statement of every block under ``node`` (not of nested functions
    or classes) by the statements ``rewrite`` makes of it, in place."""
    for field, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            setattr(node, field, [s for stmt in value for s in rewrite(stmt)])
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)) and not \
                isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            rewrite_blocks(child, rewrite)
