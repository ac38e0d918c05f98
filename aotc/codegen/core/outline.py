"""Big loops and branches of a big kernel, each emitted into a function of its own.

LLVM's loop passes take time superlinear in the size of a function: a kernel of eight
FFTs (180k lines of IR) spent 21 of its 48 s in the loop vectorizer, where one FFT alone
compiles in 1.3 s. So in a kernel of at least :data:`KERNEL_EQUATIONS` equations, a
top-level ``for``/``while``/``scan``/``cond`` holding at least
:data:`REGION_EQUATIONS` is emitted by its ordinary rule into an internal function
(:class:`.parallel.Outline`: the kernel's values it uses are captured into a struct),
which the kernel calls once. Its results leave through slots in the kernel's entry
block: the function stores every register it computed for them (a scalar, a view's
pointer, sizes and strides), the kernel loads them after the call. An error inside
returns its code, which the kernel returns in turn.

An outlined function identical to one the module has already (the same construct in
both specialized copies of a kernel) is not emitted again: the call goes to that one.

Only top-level constructs are outlined (each runs once per call, so the call costs
nothing), and not those whose results have sizes they bind while they run (a branch
joining arrays of different sizes binds the size in the kernel); a size bound before
the construct is one more captured value.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from weakref import WeakKeyDictionary

from llvmlite import ir

from ...ir import Eqn, Program, bound_uppers, nested_programs
from ...shapes import bound_symbols
from ..parallel.loops import Outline
from .context import Lowering
from .values import Scalar, Value, View

#: Equations (nested ones included) from which a kernel's big constructs are outlined.
KERNEL_EQUATIONS = 400
#: Equations a construct holds (nested ones included), at least, to be outlined.
REGION_EQUATIONS = 40

Rule = Callable[[Lowering, Eqn, Sequence[Value]], list[Value]]


def equation_count(program: Program) -> int:
    """The program's equations, those of nested programs included."""
    return sum(1 + sum(equation_count(p) for p in nested_programs(e)) for e in program.eqns)


def outlined(rule: Rule) -> Rule:
    """``rule``, emitted into a function of its own when the construct is big enough."""
    def lower(ctx: Lowering, eqn: Eqn, args: Sequence[Value]) -> list[Value]:
        if not (ctx.outline and ctx.depth == 0 and _worth_it(eqn)):
            return rule(ctx, eqn, args)
        return _lower_outlined(ctx, eqn, args, rule)
    return lower


def _worth_it(eqn: Eqn) -> bool:
    inside = set(bound_uppers(*nested_programs(eqn)))
    if any(bound_symbols(d) & inside for v in eqn.outs for d in v.type.shape):
        return False  # a size the construct binds: bound in the kernel (see above)
    return sum(equation_count(p) for p in nested_programs(eqn)) >= REGION_EQUATIONS


def _lower_outlined(ctx: Lowering, eqn: Eqn, args: Sequence[Value], rule: Rule
                    ) -> list[Value]:
    b = ctx.b
    kernel = b.function
    slots: dict[int, ir.Type] = {}

    def leave(value: ir.Value) -> ir.Value:
        """A register of the outlined function: stored into a slot of the kernel."""
        if not (isinstance(value, ir.Instruction) and value.parent.parent is not kernel):
            return value  # a constant or a value of the kernel: usable as it is
        slot = b.entry_alloca(value.type, function=kernel)
        b.store(value, slot)
        slots[id(slot)] = value.type
        return slot

    region = Outline(ctx, eqn.prim.name, serial=True)
    with region:
        results = [_map(_not_on_its_stack(kernel, r), leave) for r in rule(ctx, eqn, args)]
    _share(region)
    region.call_once()
    return [_map(r, lambda v: b.load(v, typ=slots[id(v)]) if id(v) in slots else v)
            for r in results]


#: Each module's outlined functions by a digest of their text (:func:`_share`).
_EMITTED: WeakKeyDictionary[ir.Module, dict[bytes, ir.Function]] = WeakKeyDictionary()
_METADATA_REF = re.compile(r"!(\d+)\b")
_LOOP_TAG = re.compile(r"aotc\.loop\.\d+")
_LOCAL_NAME = re.compile(r'%("[^"]*"|[-\w.$]+)')


def _share(region: Outline) -> None:
    """Call the module's copy of an identical outlined function, if there is one, and
    drop the new one. A kernel with traced loops is emitted twice (contiguous and
    strided arrays, :mod:`.specialize`): the constructs that do not read the arrays'
    layout are the same code in both, and now compile once (a kernel of five
    ``np.fft.rfft``: 88 s of LLVM -> 72 s). Identical text (metadata compared by
    content) means the same code reading the same captures, so this call's frame fits
    the copy."""
    fn = region.fn
    module = fn.module
    key = hashlib.sha256(_canonical_text(fn).encode()).digest()
    emitted = _EMITTED.setdefault(module, {})
    twin = emitted.get(key)
    if twin is None:
        emitted[key] = fn
        return
    del module.globals[fn.name]
    region.fn = twin


def _canonical_text(fn: ir.Function) -> str:
    """``fn``'s IR without its name, each metadata reference replaced by the node's
    content (loop IDs are distinct nodes with a unique tag: compared without it), and
    local names numbered afresh. No named struct types are emitted, so every ``%name``
    is a local value or block."""
    nodes = {md.name: md for md in fn.module.metadata}
    text = str(fn).replace(f'@"{fn.name}"', "@f", 1).replace(f"@{fn.name}(", "@f(", 1)
    text = _METADATA_REF.sub(lambda m: _metadata_text(nodes.get(m[1]), ()), text)
    local: dict[str, str] = {}  # numbered module-wide: renumbered in order of appearance
    return _LOCAL_NAME.sub(lambda m: local.setdefault(m[1], f"%v{len(local)}"), text)


def _metadata_text(node: object, path: tuple[int, ...]) -> str:
    if not isinstance(node, ir.MDValue):
        return _LOOP_TAG.sub("aotc.loop", str(node))
    if id(node) in path:
        return "self"
    inner = (id(node), *path)
    return "!{" + ", ".join(_metadata_text(op, inner) for op in node.operands) + "}"


def _map(value: Value, f: Callable[[ir.Value], ir.Value]) -> Value:
    if isinstance(value, Scalar):
        return replace(value, value=f(value.value))
    return replace(value, data=f(value.data), dims=tuple(map(f, value.dims)),
                   strides=tuple(map(f, value.strides)))


def _not_on_its_stack(kernel: ir.Function, value: Value) -> Value:
    """Results live in registers or buffers, never in the outlined function's frame
    (gone after the call): loop and branch results are registers (rank 0) or planned
    buffers."""
    data = value.data if isinstance(value, View) else None
    assert not (isinstance(data, ir.AllocaInstr) and data.parent.parent is not kernel), \
        "an outlined construct returned a view of its own stack"
    return value
