"""Sources rewritten to ``@aotc.export``: ``python -m aotc convert`` (Pythran and
numba.pycc modules) and ``python -m aotc annotate`` (what ``aotc.jit`` compiled).

Both tools mark the functions to compile outside the function itself, which is why a
module moves with a small, mechanical edit:

- Pythran's ``#pythran export name(float64[:, :], int)`` comments become
  ``@aotc.export("(float64[:, :], int)")`` above ``def name``. ``T or U`` arguments
  become one overload per choice, an optional argument ``T?`` one overload without it,
  ``T[]``/``T[][]`` arrays of that rank, ``order(F)`` nothing (aotc takes any strides),
  and a ``T list`` an array of ``T`` (a list passed for it is converted at the call), a
  ``(T, T) list`` one of rows, and ``T array N`` (Pythran's oldest spelling) ``T[]`` N times.
- numba.pycc's ``@cc.export("name", "f8(f8[:])")`` decorators become
  ``@aotc.export("f8(f8[:])")``: aotc reads Numba's signature strings as they are. The
  ``CC`` import, ``cc = CC(...)``, its settings and ``cc.compile()`` go away.

A ``str`` parameter stays ``str`` (compiled once per string it selects). What cannot be
said as a signature (tuple, set, dict parameters, lists of strings) is left in place
and reported with its line: the module still runs, uncompiled. The result is a
module that runs as before on NumPy and builds with ``[tool.aotc] modules``.

- ``annotate`` runs a program and writes, above each function it called through
  ``@aotc.jit`` without signatures, the ``@aotc.export`` line of the signatures it was
  compiled for (``f.exports()``), in place of the ``@aotc.jit``: the prototype becomes
  the module a wheel ships.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass, field

#: Pythran's scalar names that are not aotc's: what they mean in NumPy.
_PYTHRAN_DTYPES = {
    "intc": "int32", "uintc": "uint32", "intp": "int64", "uintp": "uint64",
    "int_": "int64", "uint": "uint64", "long": "int64", "longlong": "int64",
    "ulonglong": "uint64", "float_": "float64", "double": "float64",
    "single": "float32", "complex_": "complex128", "byte": "int8", "ubyte": "uint8",
    "short": "int16", "ushort": "uint16", "bool_": "bool_",
}
_NUMPY_NAMES = frozenset({
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
})
#: A Python scalar name as an array's element type.
_ELEMENT = {"int": "int64", "float": "float64", "complex": "complex128", "bool": "bool_"}
#: Overloads one export line may expand to (``T or U`` in many arguments multiplies).
MAX_OVERLOADS = 64
_EXPORT = re.compile(r"^\s*#\s*pythran\s+export\s+(?P<specs>.*?)\s*$")


class Unconvertible(ValueError):
    """A Pythran type aotc's signatures cannot say."""


@dataclass
class Converted:
    """The converted source, and what the user should know (each note names its line)."""

    text: str
    notes: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)


def _split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _scalar(name: str) -> str:
    if name in ("int", "float", "complex", "bool") or name in _NUMPY_NAMES:
        return name
    if name in _PYTHRAN_DTYPES:
        return _PYTHRAN_DTYPES[name]
    raise Unconvertible(f"type '{name}'")


def _array(element: str, dims: list[str]) -> str:
    dtype = _ELEMENT.get(element) or _scalar(element)
    return f"{dtype}[{', '.join(dims)}]"


def _pythran_type(text: str) -> list[str]:
    """The aotc types a Pythran argument type stands for (several for ``or``)."""
    text = re.sub(r"\s+order\s*\(\s*[CF]\s*\)\s*$", "", text.strip())
    choices = re.split(r"\s+or\s+", text)
    if len(choices) > 1:
        return [t for choice in choices for t in _pythran_type(choice)]
    if text == "str":  # a parameter that selects (aotc.packaging.string_choices)
        return ["str"]
    if text.endswith(" list"):
        item = text[:-len(" list")].strip()
        if item.startswith("(") and item.endswith(")"):  # a list of like tuples: rows
            fields = [_scalar(f.strip()) for f in _split_top(item[1:-1])]
            if len(set(fields)) != 1:
                raise Unconvertible(f"type '{text}'")
            return [_array(fields[0], [":", str(len(fields))])]
        return [t[:-1] + ", :]" if t.endswith("]") else _array(t, [":"])
                for t in _pythran_type(item)]
    old = re.fullmatch(r"(\w+)\s+array(?:\s+(\d+))?", text)  # Pythran's oldest: float array 2
    if old is not None:
        return [_array(old.group(1), [":"] * int(old.group(2) or 1))]
    if text.startswith("(") or re.search(r"\b(set|dict|str|None|slice)\b", text) or ":" \
            in text.split("[")[0]:
        raise Unconvertible(f"type '{text}'")
    match = re.fullmatch(r"(\w+)\s*((?:\[[^\]]*\]\s*)*)", text)
    if match is None:
        raise Unconvertible(f"type '{text}'")
    element, subscripts = match.group(1), match.group(2)
    if not subscripts:
        return [_scalar(element)]
    brackets = re.findall(r"\[([^\]]*)\]", subscripts)
    if all(b.strip() in ("", ":") or b.strip().isdigit() for b in brackets):
        # float64[][], float64[][][3]: one axis per pair, of that size when it has one
        return [_array(element, [b.strip() if b.strip().isdigit() else ":"
                                 for b in brackets])]
    if len(brackets) > 1:
        raise Unconvertible(f"type '{text}'")
    dims = [d.strip() or ":" for d in brackets[0].split(",")]  # (float[,]: Pythran's old 2-d)
    if not all(d in (":", "::", "::1") or d.isdigit() for d in dims):
        raise Unconvertible(f"type '{text}'")
    return [_array(element, [":" if d.startswith(":") else d for d in dims])]


def _signatures(arguments: list[str]) -> list[str]:
    """Every ``(T, U, ...)`` signature string a Pythran argument list stands for."""
    required: list[str] = []
    optional: list[str] = []
    for arg in arguments:
        (optional if arg.endswith("?") else required).append(arg.rstrip("?").strip())
        if not arg.endswith("?") and optional:
            raise Unconvertible("an optional argument before a required one")
    out: list[str] = []
    for keep in range(len(optional), -1, -1):  # the longest first, as Pythran tries them
        kinds = [_pythran_type(a) for a in [*required, *optional[:keep]]]
        for combo in itertools.product(*kinds):
            out.append(f"({', '.join(combo)})")
            if len(out) > MAX_OVERLOADS:
                raise Unconvertible(f"more than {MAX_OVERLOADS} overloads")
    return out


def _pythran_exports(lines: list[str], notes: list[str]) -> tuple[dict[str, list[str]], set[int]]:
    """Per function, its signature strings; and the (0-based) lines fully converted."""
    exports: dict[str, list[str]] = {}
    converted: set[int] = set()
    for i, line in enumerate(lines):
        match = _EXPORT.match(line)
        if match is None:
            continue
        whole = True
        specs, last = _continued(match.group("specs"), lines, i)
        for spec in _split_top(specs):
            found = re.fullmatch(r"(\w+)\s*\((.*)\)", spec, re.DOTALL)
            if found is None:
                notes.append(f"line {i + 1}: '#pythran export {spec}' exports no function "
                             "signature; left as it is")
                whole = False
                continue
            name, args = found.group(1), _split_top(found.group(2))
            try:
                sigs = _signatures(args)
            except Unconvertible as exc:
                notes.append(f"line {i + 1}: {name}({found.group(2)}): {exc} has no aotc "
                             "signature (tuple, set, dict and str-list parameters); left as "
                             "it is, so this overload runs uncompiled")
                whole = False
                continue
            exports.setdefault(name, []).extend(s for s in sigs
                                                if s not in exports.get(name, []))
        if whole:
            converted.update(range(i, last + 1))
    return exports, converted


def _continued(specs: str, lines: list[str], first: int) -> tuple[str, int]:
    """An export whose parentheses close on later comment lines (``# export f(int,`` then
    ``#   float)``), joined; and the last line it takes."""
    last = first
    while specs.count("(") > specs.count(")") and last + 1 < len(lines) \
            and lines[last + 1].lstrip().startswith("#"):
        last += 1
        specs += " " + lines[last].lstrip().lstrip("#").strip()
    return specs, last


def _pycc_name(tree: ast.Module) -> str | None:
    """The variable ``cc = CC("mod")`` binds, if the module makes one."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, (ast.Name, ast.Attribute)) and \
                ast.unparse(node.value.func).split(".")[-1] == "CC" and \
                len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
    return None


def _numba_type_text(node: ast.expr) -> str:
    """A pycc signature, given as a string or as Numba type objects, as a string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return re.sub(r"\b(?:numba\.types|numba|nb|types)\.", "", ast.unparse(node))


def _is_cc(node: ast.AST, cc: str) -> bool:
    return isinstance(node, ast.Name) and node.id == cc


class _Edits:
    """Line edits, applied last to first so earlier line numbers stay true; insertions
    at one line keep the order they were made in (``first`` ones before)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.edits: list[tuple[int, int, int, list[str]]] = []  # [first, last) 0-based

    def set(self, first: int, last: int, new: list[str], *, leading: bool = False) -> None:
        order = -1 if leading else len(self.edits)
        self.edits.append((first, last, order, new))

    def apply(self) -> list[str]:
        out = list(self.lines)
        for first, last, _, new in sorted(self.edits, key=lambda e: e[:3], reverse=True):
            out[first:last] = new
        return out


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _decorator(signatures: list[str]) -> str:
    return f"@aotc.export({', '.join(map(_quoted, signatures))})"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _convert_pycc(tree: ast.Module, cc: str, edits: _Edits, notes: list[str],
                  functions: list[str]) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            sigs, names, first = [], [], None
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute) and \
                        _is_cc(deco.func.value, cc) and deco.func.attr == "export" and \
                        len(deco.args) == 2:
                    names.append(ast.literal_eval(deco.args[0]) if isinstance(
                        deco.args[0], ast.Constant) else ast.unparse(deco.args[0]))
                    sigs.append(_numba_type_text(deco.args[1]))
                    first = deco.lineno if first is None else first
                    edits.set(deco.lineno - 1, deco.end_lineno or deco.lineno, [])
            if sigs and first is not None:
                edits.set(first - 1, first - 1,
                          [_indent(edits.lines[first - 1]) + _decorator(sigs)])
                functions.append(node.name)
                renamed = sorted({n for n in names if n != node.name})
                if renamed:
                    notes.append(f"line {node.lineno}: pycc exported '{node.name}' as "
                                 f"{', '.join(map(repr, renamed))}; aotc exports it as "
                                 f"'{node.name}': rename the function or its callers")
    for node in tree.body:
        text = ast.unparse(node)
        pycc_setup = (isinstance(node, ast.ImportFrom) and node.module == "numba.pycc") or (
            isinstance(node, ast.Assign) and any(
                _is_cc(t, cc) or (isinstance(t, ast.Attribute) and _is_cc(t.value, cc))
                for t in node.targets))
        if pycc_setup:
            edits.set(node.lineno - 1, node.end_lineno or node.lineno, [])
        elif isinstance(node, ast.If) and f"{cc}.compile()" in text:
            rest = [s for s in node.body if ast.unparse(s) != f"{cc}.compile()"]
            if rest or node.orelse:
                for s in node.body:
                    if ast.unparse(s) == f"{cc}.compile()":
                        edits.set(s.lineno - 1, s.end_lineno or s.lineno,
                                  [_indent(edits.lines[s.lineno - 1]) + "pass  # built by "
                                   "python -m build ([tool.aotc] modules)"])
            else:
                edits.set(node.lineno - 1, node.end_lineno or node.lineno, [])


def _import_line(tree: ast.Module) -> int:
    """Where ``import aotc`` goes (0-based): after the module's last top-level import,
    else after its docstring and ``__future__`` imports."""
    after = 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or (
                node is tree.body[0] and isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)):
            after = node.end_lineno or node.lineno
        elif after:
            break
    return after


def convert_source(text: str) -> Converted:
    """``text`` (a module's source) with its Pythran exports and pycc decorators made
    ``@aotc.export`` lines; raises SyntaxError if it does not parse."""
    tree = ast.parse(text)
    lines = text.splitlines()
    edits, notes, functions = _Edits(lines), list[str](), list[str]()
    exports, converted = _pythran_exports(lines, notes)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name, sigs in exports.items():
        node = defs.get(name)
        if node is None:
            notes.append(f"'#pythran export {name}(...)': the module defines no top-level "
                         f"function '{name}'")
            continue
        at = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
        edits.set(at, at, [_indent(lines[node.lineno - 1]) + _decorator(sigs)])
        functions.append(name)
    for i in converted:
        edits.set(i, i + 1, [])
    cc = _pycc_name(tree)
    if cc is not None:
        _convert_pycc(tree, cc, edits, notes, functions)
    done = _finished(text, tree, edits, notes, functions)
    if cc is not None:
        done.text = _without_unused_numba_imports(done.text)
    return done


def _finished(text: str, tree: ast.Module, edits: _Edits, notes: list[str],
              functions: list[str]) -> Converted:
    """The edits applied, with ``import aotc`` where functions became exports and the
    module does not import it, blank runs tidied and the final newline kept."""
    if functions and not _imports_aotc(tree):
        at = _import_line(tree)
        edits.set(at, at, ["import aotc"], leading=True)
    out = "\n".join(_tidy(edits.apply()))
    return Converted(out + "\n" if text.endswith("\n") or not text else out, notes,
                     functions)


def _tidy(lines: list[str]) -> list[str]:
    """At most two blank lines in a row, none at the end (removed lines leave gaps)."""
    out: list[str] = []
    for line in lines:
        if line.strip() or len(out) < 2 or out[-1].strip() or out[-2].strip():
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


def _without_unused_numba_imports(text: str) -> str:
    """``text`` without the numba names only the pycc signatures used (its final
    newline kept)."""
    tree = ast.parse(text)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.value.id for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    edits = _Edits(text.splitlines())
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a for a in node.names if (module or a.name).split(".")[0] == "numba"]
            if names and len(names) == len(node.names) and \
                    not any((a.asname or a.name).split(".")[0] in used for a in names):
                edits.set(node.lineno - 1, node.end_lineno or node.lineno, [])
    out = "\n".join(_tidy(edits.apply()))
    return out + "\n" if text.endswith("\n") else out


def annotate_source(text: str, compiled: dict[int, list[str]]) -> Converted:
    """``text`` with an ``@aotc.export`` line for each function whose first line (its
    first decorator's, as ``co_firstlineno`` counts) is a key of ``compiled``: above its
    ``def``, in place of an ``@aotc.jit`` decorator."""
    tree = ast.parse(text)
    lines = text.splitlines()
    edits, notes, functions = _Edits(lines), list[str](), list[str]()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        if first not in compiled:
            continue
        if node not in tree.body:
            notes.append(f"line {node.lineno}: '{node.name}' is not a module-level function; "
                         "a wheel exports those only")
            continue
        if any(_names_export(d) for d in node.decorator_list):
            notes.append(f"line {node.lineno}: '{node.name}' is already @aotc.export; "
                         "left as it is")
            continue
        line = _indent(lines[node.lineno - 1]) + _decorator(compiled[first])
        for deco in node.decorator_list:
            if ast.unparse(deco) in ("aotc.jit", "jit"):
                edits.set(deco.lineno - 1, deco.end_lineno or deco.lineno, [line])
                break
        else:
            edits.set(node.lineno - 1, node.lineno - 1, [line])
        functions.append(node.name)
    return _finished(text, tree, edits, notes, functions)


def _names_export(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ast.unparse(target) in ("aotc.export", "export")


def _imports_aotc(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Import) and any(a.name == "aotc" and a.asname is None
                                                  for a in n.names) for n in tree.body)

