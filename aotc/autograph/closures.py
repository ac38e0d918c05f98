"""Nested functions read their enclosing kernel's variables as they are at the call.

A Python closure is late-bound: ``def ok(c): return c not in cols`` sees ``cols`` as it
is when ``ok`` is called. A converted kernel's loops and branches are functions of their
own, whose variables are parameters and results (:mod:`.transform`), so the closure
cell of the kernel's ``cols`` keeps the value from before the loop, and a helper called
in the loop would read that: n-queens counted n**n placements. So each variable of the
kernel that a nested function reads, and that the kernel changes after binding it (a
loop or branch assigns it, it is assigned twice, or its items change), becomes a
leading positional parameter of that function, and every use of the function passes
the variable's value there::

    def ok(c):                          def ok(cols, c):
        return c not in cols      ->        return c not in cols
    ... ok(c) ...                       ... ok(cols, c) ...
    max(r, key=ok)                      max(r, key=__aotc__.bound(ok, cols))

The same rewrite applies when the nested function is converted from its source
(:func:`bind_late`, with the names noted on the function object by
``__aotc__.late_binding``), so a call of one nested function inside another passes its
variables on. A function whose variable a comprehension or lambda rebinds where the
function is used is left as it is.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable

from .liveness import items_written
from .syntax import load, parameters, runtime_call, walk_code

#: The attribute ``__aotc__.late_binding`` sets on a nested function:
#: ``(its late names, the late names of every nested function of its scope)``.
LATE = "__aotc_late__"

Table = dict[str, tuple[str, ...]]
_COMPOUND = (ast.For, ast.While, ast.If, ast.With, ast.Try)


def _own_names(fn: ast.FunctionDef | ast.Lambda) -> set[str]:
    """A function's parameters and the names it binds (its locals)."""
    names = set(parameters(fn))
    names.update(a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None)
    for node in _scope(fn) if isinstance(fn, ast.FunctionDef) else ():
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def _reads(fn: ast.FunctionDef | ast.Lambda) -> set[str]:
    """The names a function reads that are not its own (its free names)."""
    body: Iterable[ast.AST] = fn.body if isinstance(fn, ast.FunctionDef) else [fn.body]
    loaded = {n.id for stmt in body for n in ast.walk(stmt)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - _own_names(fn)


def _scope(node: ast.AST) -> Iterable[ast.AST]:
    """The nodes under ``node`` in its own scope, with the functions it defines (whose
    bodies are theirs, not entered)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _scope(child)


def _nested(tree: ast.FunctionDef) -> dict[str, ast.FunctionDef | ast.Lambda]:
    """The functions ``tree`` defines once, by name: undecorated ``def``s and
    ``name = lambda ...`` assignments."""
    found: dict[str, ast.FunctionDef | ast.Lambda] = {}
    bindings: Counter[str] = Counter()
    for node in _scope(tree):
        if isinstance(node, ast.FunctionDef):
            bindings[node.name] += 1
            if not node.decorator_list:
                found[node.name] = node
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bindings[node.id] += 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Lambda):
            found[node.targets[0].id] = node.value
    return {name: fn for name, fn in found.items() if bindings[name] == 1}


def _changing(tree: ast.FunctionDef) -> set[str]:
    """The kernel's variables that change after they are first bound: assigned twice,
    in a loop or branch, or with their items changed (which conversion makes a new
    value: ``lst.append(v)`` is ``lst = append(lst, v)``), here or in a nested function."""
    stores: Counter[str] = Counter(parameters(tree))
    nested_stores: set[str] = set()

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                stores[child.id] += 1
                if inside:
                    nested_stores.add(child.id)
            visit(child, inside or isinstance(child, (*_COMPOUND, ast.comprehension)))

    visit(tree, False)
    changed = {n for n, k in stores.items() if k > 1} | nested_stores
    return changed | _changed_items(tree.body)


def _changed_items(body: list[ast.stmt]) -> set[str]:
    """Names whose items the statements change (appends among them)."""
    return items_written(body) | {
        n.func.value.id for stmt in body for n in walk_code(stmt) if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
        and n.func.attr == "append"}


def _shadowed(tree: ast.FunctionDef, nested: dict[str, ast.FunctionDef | ast.Lambda]
              ) -> dict[str, set[str]]:
    """For each nested function, the names a comprehension or another function binds
    for itself around a use of it: the use could not read the kernel's variable there."""
    found: dict[str, set[str]] = {name: set() for name in nested}

    def visit(node: ast.AST, bound: frozenset[str]) -> None:
        if isinstance(node, ast.Name) and node.id in nested:
            found[node.id] |= bound
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            bound = bound | {n.id for g in node.generators for n in ast.walk(g.target)
                             if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not tree \
                and not any(node is fn for fn in nested.values()):
            bound = bound | _own_names(node)
        for child in ast.iter_child_nodes(node):
            visit(child, bound)

    visit(tree, frozenset())
    return found


def late_names(tree: ast.FunctionDef) -> Table:
    """For each function nested in ``tree`` (see :func:`_nested`), the kernel's changing
    variables it reads, directly or through the other nested functions it uses."""
    nested = _nested(tree)
    if not nested:
        return {}
    changing = (_changing(tree) | {n for fn in nested.values() if isinstance(fn, ast.FunctionDef)
                                   for n in _changed_items(fn.body)}) - set(nested)
    shadowed = _shadowed(tree, nested)
    reads = {name: _reads(fn) for name, fn in nested.items()}
    table = {name: set(reads[name] & changing) for name in nested}
    grew = True
    while grew:  # through the nested functions each one uses
        grew = False
        for name in nested:
            for other in reads[name] & set(nested):
                if not table[other] <= table[name]:
                    table[name] |= table[other]
                    grew = True
    return {name: tuple(sorted(names)) for name, names in table.items()
            if names and not names & shadowed[name]}


class _Uses(ast.NodeTransformer):
    """Each use of a late-bound function passes its variables: a call gets them as
    leading arguments, any other use a ``functools.partial`` of them."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in self.table):
            self.generic_visit(node)
            return node
        node.args = [*(ast.copy_location(load(n), func) for n in self.table[func.id]),
                     *(self.visit(a) for a in node.args)]
        node.keywords = [self.visit(k) for k in node.keywords]
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.table:
            names = [ast.copy_location(load(n), node) for n in self.table[node.id]]
            return ast.copy_location(runtime_call("bound", node, *names), node)
        return node


def bind_late(fn: ast.FunctionDef | ast.Lambda, names: tuple[str, ...], table: Table) -> None:
    """Make ``names`` ``fn``'s leading (positional-only) parameters and pass the
    variables of the functions in ``table`` at each use of them in its body, in place."""
    fn.args.posonlyargs[:0] = [ast.copy_location(ast.arg(n), fn) for n in names]
    uses = _Uses({k: v for k, v in table.items() if set(v) <= _own_names(fn) | set(names)})
    if isinstance(fn, ast.FunctionDef):
        fn.body = [uses.visit(stmt) for stmt in fn.body]
    else:
        fn.body = uses.visit(fn.body)


def late_bound_closures(tree: ast.FunctionDef) -> dict[str, ast.FunctionDef]:
    """Rewrite ``tree``'s nested functions and their uses as the module says, in place;
    the ``def``s it nests once, by name, as rewritten (for how they change lists)."""
    nested = _nested(tree)
    defs = {name: fn for name, fn in nested.items() if isinstance(fn, ast.FunctionDef)}
    table = late_names(tree)
    if not table:
        return defs
    for name, names in table.items():
        bind_late(nested[name], names, table)
    _Scope(table, {id(nested[name]) for name in table}).visit(tree)
    return defs


def _literal(value: str | tuple[object, ...]) -> ast.expr:
    """The expression for a tuple of strings and such tuples."""
    if isinstance(value, tuple):
        return ast.Tuple([_literal(v) for v in value], ast.Load())  # type: ignore[arg-type]
    return ast.Constant(value)


class _Scope(_Uses):
    """:class:`_Uses` in the kernel itself, which also notes each late-bound function
    where it is made (``__aotc__.late_binding``); their bodies are bound already."""

    def __init__(self, table: Table, made: set[int]) -> None:
        super().__init__(table)
        self.made = made
        self.pairs = _literal(tuple(table.items()))

    def _marked(self, fn: ast.expr, name: str) -> ast.Call:
        """``__aotc__.late_binding(fn, names, table)`` (the table as pairs, which a
        constant can hold)."""
        return ast.copy_location(runtime_call(
            "late_binding", fn, _literal(self.table[name]), self.pairs), fn)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST | list[ast.stmt]:
        if id(node) not in self.made:
            self.generic_visit(node)
            return node
        return [node, ast.copy_location(ast.Expr(self._marked(load(node.name), node.name)),
                                        node)]

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node if id(node) in self.made else self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        target = node.targets[0]
        if id(node.value) in self.made and isinstance(target, ast.Name):
            node.value = self._marked(node.value, target.id)
            return node
        return self.generic_visit(node)


