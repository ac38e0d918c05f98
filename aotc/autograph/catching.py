"""``try``/``except`` around code that may raise while the kernel runs.

A ``try`` statement is Python's own while a kernel is traced: its handlers catch what is
raised then (a build-time ``KeyError``, a missing module). What the compiled kernel
raises while it runs (an index out of bounds, a size check, a ``raise`` on a runtime
condition) leaves it with an error code instead, which nothing in the kernel catches:
compiled, ``try: v = x[10] except IndexError: v = -1.0`` would raise where Python
returns -1.0. So a handler that would catch an error the body may raise at run time is
a located error at the ``try``, not a different answer::

    try:                               try:
        body                               with __aotc__.try_body((E1, E2)):
    except (E1, E2):               ->          body
        handler                        except (E1, E2):
                                           __aotc__.keep_refusals()
                                           handler

``try_body`` notes what the body traces; on leaving it, it raises
:class:`UncatchableError` if the body may raise at run time an exception the handlers
catch; ``keep_refusals`` passes that error through a handler (``except Exception``)
that would have caught it.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from typing import Any

from ..errors import TraceError
from ..ir import Eqn, raised_errors
from ..tracing.tracer import current, user_loc
from .syntax import runtime_call, walk_code


class UncatchableError(TraceError):
    """A handler would catch an error the compiled kernel raises while it runs."""


def catch_runtime_errors(tree: ast.FunctionDef) -> None:
    """Rewrite each ``try`` with handlers in ``tree``, in place."""
    for node in walk_code(tree):
        if isinstance(node, ast.Try) and node.handlers:
            caught = [h.type if h.type is not None else ast.Name("BaseException", ast.Load())
                      for h in node.handlers]
            watched = ast.With([ast.withitem(runtime_call(
                "try_body", ast.Tuple(caught, ast.Load())))], node.body)
            node.body = [ast.copy_location(watched, node)]  # (located at the try)
            for handler in node.handlers:
                keep = ast.Expr(runtime_call("keep_refusals"))
                handler.body.insert(0, ast.copy_location(keep, handler))


class try_body:  # noqa: N801 - converted code's name for it
    """Notes the equations and checks a ``try`` body traces (see above)."""

    def __init__(self, caught: tuple[Any, ...]) -> None:
        self.caught = tuple(_classes(caught))

    def __enter__(self) -> None:
        self.ctx, self.loc = current(), user_loc()
        self.eqns, self.checks = len(self.ctx.eqns), len(self.ctx.checks)

    def __exit__(self, *_: Any) -> None:
        eqns: list[Eqn] = self.ctx.eqns[self.eqns:]
        errors = [*raised_errors(eqns), *((c.error, c.message)
                                           for c in self.ctx.checks[self.checks:])]
        for name, message in errors:
            error = getattr(builtins, name, Exception)
            if isinstance(error, type) and issubclass(error, self.caught):
                what = re.sub(r"\{[^}]*\}", "...", message)
                raise UncatchableError(
                    f"this try statement would catch {name}({what!r}), which the compiled "
                    "kernel raises while it runs, where nothing can catch it",
                    loc=self.loc, kernel=self.ctx.kernel,
                    hint="test for the case before (if i < x.shape[0]: ...) instead of "
                         "catching the error")


def _classes(caught: Any) -> list[type]:
    found: list[type] = []
    for item in caught:
        if isinstance(item, tuple):
            found.extend(_classes(item))
        elif isinstance(item, type) and issubclass(item, BaseException):
            found.append(item)
    return found


def keep_refusals() -> None:
    """Raise again the :class:`UncatchableError` a handler caught."""
    error = sys.exc_info()[1]
    if isinstance(error, UncatchableError):
        raise error
