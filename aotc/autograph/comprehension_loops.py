"""Dict and set comprehensions assigned to a name, written as the loops they mean (and
list comprehensions with an assignment expression, assigned or returned).

``d = {i: x[i] * 2 for i in range(n)}`` over a runtime range makes a dict that grows
while the kernel runs, which a loop builds as a box (:mod:`.boxing`); a comprehension,
an expression, has no loop for the box to be carried by. So the assignment becomes the
loop Python's comprehension runs::

    d = {k: v for a in xs if c}    ->    d = {}
                                         for __aotc_comp_a in xs:
                                             if c':
                                                 d[k'] = v'

and ``s = {e for a in xs}`` likewise with ``s = set()`` and ``s.add(e')``, each ``'``
reading the renamed loop variables (a comprehension's variables do not leak into the
function, as a loop's would). Over build-time items the loop runs while the kernel is
built, giving what the comprehension gives. ``[y for v in xs if (y := f(v)) > 0]``
becomes the loop appending to a list the same way: the target of ``:=`` is the
function's variable in Python, which the loop's body then reads and leaves bound.
"""

from __future__ import annotations

import ast

from .syntax import HIDDEN, load, rewrite_blocks, store

_PREFIX = HIDDEN + "comp_"


def comprehensions_as_loops(tree: ast.FunctionDef) -> None:
    """Rewrite such assignments in every block of ``tree`` (a nested function's when it
    is converted itself), in place."""
    rewrite_blocks(tree, _rewritten)


def _rewritten(stmt: ast.stmt) -> list[ast.stmt]:
    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.ListComp) \
            and _as_loop_of_function(stmt.value):
        made = _as_loop(RESULT, stmt.value, stmt)
        back = ast.copy_location(ast.Return(load(RESULT)), stmt)
        return [*made, back]
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, (ast.DictComp, ast.SetComp, ast.ListComp))
            and _as_loop_of_function(stmt.value)):
        return [stmt]
    return _as_loop(stmt.targets[0].id, stmt.value, stmt)


#: The list a ``return [... (y := ...) ...]`` builds before it returns it.
RESULT = _PREFIX + "result"


def _as_loop_of_function(comp: ast.DictComp | ast.SetComp | ast.ListComp) -> bool:
    """Whether the comprehension runs as the function's own loop: a dict or set one, or
    a list one with an assignment expression, whose target Python binds in the
    function (not an async one)."""
    if any(g.is_async for g in comp.generators):
        return False
    return not isinstance(comp, ast.ListComp) \
        or any(isinstance(n, ast.NamedExpr) for n in ast.walk(comp))


def _as_loop(name: str, comp: ast.DictComp | ast.SetComp | ast.ListComp, stmt: ast.stmt
             ) -> list[ast.stmt]:
    bound = {n.id for g in comp.generators for n in ast.walk(g.target)
             if isinstance(n, ast.Name)}
    renamed = _Renamed(bound)
    if isinstance(comp, ast.DictComp):
        start: ast.expr = ast.Dict([], [])
        target = ast.Subscript(load(name), renamed.visit(comp.key), ast.Store())
        innermost: ast.stmt = ast.Assign([target], renamed.visit(comp.value))
    else:
        start = ast.Call(load("set"), [], []) if isinstance(comp, ast.SetComp) \
            else ast.List([], ast.Load())
        add = ast.Attribute(load(name), "add" if isinstance(comp, ast.SetComp) else "append",
                            ast.Load())
        innermost = ast.Expr(ast.Call(add, [renamed.visit(comp.elt)], []))
    body = innermost
    for k in reversed(range(len(comp.generators))):
        generator = comp.generators[k]
        for test in reversed(generator.ifs):
            body = ast.If(renamed.visit(test), [body], [])
        # (the first iterable is evaluated outside: its names are the function's)
        iterable = generator.iter if k == 0 else renamed.visit(generator.iter)
        body = ast.For(renamed.visit(generator.target), iterable, [body], [])
    made = [ast.Assign([store(name)], start), body]
    for new in made:
        ast.copy_location(new, stmt)
        ast.fix_missing_locations(new)
    return made


class _Renamed(ast.NodeTransformer):
    """The comprehension's own variables under hidden names."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            return ast.copy_location(ast.Name(_PREFIX + node.id, node.ctx), node)
        return node
