"""Convert Python control flow in kernels so it traces (see ``transform`` and ``runtime``).

:func:`convert` returns a function with the same signature whose ``for``, ``while``
and ``if`` statements call :mod:`aotc.autograph.runtime`; helper functions from the
kernel's module that it calls are converted too. Functions without control flow, or
whose source cannot be read, are returned unchanged.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Callable
from typing import Any

from . import runtime
from .transform import RUNTIME, convert_function, has_control_flow

_CACHE: dict[Callable[..., Any], Callable[..., Any]] = {}


def _parse(fn: Callable[..., Any]) -> ast.FunctionDef | None:
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    dedented = textwrap.dedent(source)
    indent = len(source.splitlines()[0]) - len(dedented.splitlines()[0])
    try:
        module = ast.parse(dedented)
    except SyntaxError:
        return None
    tree = module.body[0] if module.body else None
    if not isinstance(tree, ast.FunctionDef) or tree.name != fn.__name__:
        return None  # a lambda, or source that is not this function
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
    for node in ast.walk(tree):
        if hasattr(node, "col_offset"):
            node.col_offset += indent
            if getattr(node, "end_col_offset", None) is not None:
                node.end_col_offset += indent
    return tree


def _helpers(fn: Callable[..., Any], tree: ast.FunctionDef) -> dict[str, Any]:
    """Functions of the kernel's own module that it calls, converted as well."""
    called = {n.func.id for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    out = {}
    for name in called:
        target = fn.__globals__.get(name)
        if isinstance(target, types.FunctionType) and target is not fn \
                and target.__module__ == fn.__module__:
            out[name] = convert(target)
    return out


def convert(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its control flow converted (cached per function)."""
    if fn in _CACHE:
        return _CACHE[fn]
    _CACHE[fn] = fn  # a guard against recursion while converting helpers
    tree = _parse(fn) if isinstance(fn, types.FunctionType) else None
    if tree is None:
        return fn
    namespace: dict[str, Any] = dict(fn.__globals__)
    for name, value in runtime.BUILTINS.items():
        namespace.setdefault(name, value)
    namespace[RUNTIME] = runtime
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                namespace[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                pass
    namespace.update(_helpers(fn, tree))
    if not has_control_flow(tree) and not any(
            isinstance(n, ast.Name) and n.id in runtime.BUILTINS for n in ast.walk(tree)):
        if not _helpers(fn, tree):
            return fn
    convert_function(tree)
    module = ast.fix_missing_locations(ast.Module([tree], []))
    code = compile(module, fn.__code__.co_filename, "exec")
    exec(code, namespace)
    converted = namespace[tree.name]
    converted.__defaults__ = fn.__defaults__
    converted.__kwdefaults__ = fn.__kwdefaults__
    converted.__wrapped__ = fn
    _CACHE[fn] = converted
    return converted


__all__ = ["convert", "runtime"]
