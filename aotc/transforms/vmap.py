"""``vmap`` of a whole kernel program: inputs, outputs, sizes, checks and writebacks.

The equations go through the batching interpreter (:mod:`.batching`); this module does
what lies around them. The batch size is a new size symbol read from the first batched
argument (every other batched argument gets a runtime check that it agrees, as a named
dimension does). Size symbols read from the kernel's arguments move to the axis they
have in the batched argument; a size that is the value of a batched integer argument
cannot exist (each lane would have its own), which is a located error.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import Atom, Check, DimSource, Program, Var, size_expressions, verify
from ..shapes import DimExpr
from ..tracing.avals import AType
from . import batching_control, batching_rules  # noqa: F401  (fill the rule table)
from .batching import BatchCtx, batch_eqns, batched_type
from .core import Emitter, TransformError


def vmap_program(program: Program, names: Sequence[str], in_axes: Sequence[int | None],
                 out_axes: Sequence[int | None], size_name: str) -> Program:
    """The batched form of ``program`` (``names`` are its parameters' names)."""
    size = DimExpr.sym(size_name)
    em = Emitter()
    inputs: list[Var] = []
    args: list[Atom] = []
    for var, axis in zip(program.inputs, in_axes, strict=True):
        if axis is None:
            inputs.append(Var(var.type))
            args.append(inputs[-1])
            continue
        lead = Var(batched_type(var.type, size))
        order = list(range(1, var.type.ndim + 1))
        order.insert(axis, 0)
        outer = Var(AType(var.type.dtype, tuple(lead.type.shape[p] for p in order)))
        inputs.append(outer)
        ctx = BatchCtx(em, size)
        args.append(ctx.moveaxis(outer, axis, 0))
    flags = [a is not None for a in in_axes]
    ctx = BatchCtx(em, size)
    # Values written into arguments ride along as extra outputs.
    extended = program.replace(outputs=program.outputs + tuple(a for _, a in program.writebacks))
    outs, out_flags = batch_eqns(extended, args, flags, ctx)
    n = len(program.outputs)
    results: list[Atom] = []
    for j, (atom, flag, axis) in enumerate(zip(outs[:n], out_flags[:n], out_axes, strict=True)):
        if axis is None:
            if flag:
                raise TransformError(f"vmap: out_axes is None for result {j} but it depends "
                                     "on the batched arguments", kernel=program.name)
            results.append(atom)
        else:
            results.append(ctx.moveaxis(ctx.batched(atom, flag), 0, axis))
    written: list[tuple[int, Atom]] = []
    for (index, _), atom, flag in zip(program.writebacks, outs[n:], out_flags[n:], strict=True):
        axis = in_axes[index]
        if axis is None and flag:
            raise TransformError(f"vmap: the kernel writes batched values into argument "
                                 f"'{names[index]}', which is not batched (in_axes=None)",
                                 kernel=program.name)
        written.append((index, atom if axis is None else
                        ctx.moveaxis(ctx.batched(atom, flag), 0, axis)))
    batched = Program(tuple(inputs), tuple(em.eqns), tuple(results),
                      _sources(program, names, in_axes, size_name, inputs),
                      program.checks + _batch_checks(program, names, in_axes, size_name),
                      program.name, tuple(written))
    verify(batched)
    return batched


def _sources(program: Program, names: Sequence[str], in_axes: Sequence[int | None],
             size_name: str, inputs: Sequence[Var]) -> tuple[DimSource, ...]:
    """Where each size is read in the batched arguments: the batch size from the first
    batched argument, each old size from its axis moved past the batch axis."""
    first = next(i for i, a in enumerate(in_axes) if a is not None)
    found = [DimSource(size_name, first, in_axes[first])]
    used = _symbols(program)
    for k, axis in enumerate(in_axes):
        if axis is not None and k != first:
            found.append(DimSource(_lane_symbol(names[k], size_name), k, axis))
    for src in program.dim_sources:
        if src.program is not None:  # computed from scalar arguments before the kernel
            found.append(_derived(src, program, in_axes, inputs, names))
            continue
        axis = in_axes[src.index]
        if axis is not None and src.axis is None and src.symbol not in used:
            continue  # an integer argument that no size of the kernel reads
        if axis is not None and src.axis is None:
            raise TransformError(
                f"vmap: argument '{names[src.index]}' is a size in the kernel, so it cannot "
                "be batched (each lane would need arrays of its own size)",
                kernel=program.name, hint=f"pass in_axes=None for '{names[src.index]}'")
        moved = src.axis if axis is None or src.axis is None or src.axis < axis \
            else src.axis + 1
        found.append(DimSource(src.symbol, src.index, moved))
    return tuple(found)


def _symbols(program: Program) -> set[str]:
    """Every size symbol the program's types, params, checks and derived sizes read."""
    found: set[str] = set()
    for expr in size_expressions(program):
        found |= expr.symbols()
    for check in program.checks:
        found |= check.lhs.symbols() | check.rhs.symbols()
    for src in program.dim_sources:
        if src.program is not None:
            found |= _symbols(src.program)
    return found


def _derived(src: DimSource, program: Program, in_axes: Sequence[int | None],
             inputs: Sequence[Var], names: Sequence[str]) -> DimSource:
    """A size computed from scalar arguments: its little program now takes the batched
    kernel's inputs, and may read only the unbatched ones."""
    assert src.program is not None
    used = {a for e in src.program.eqns for a in e.inputs if isinstance(a, Var)}
    for k, var in enumerate(src.program.inputs):
        if in_axes[k] is not None and var in used:
            raise TransformError(
                f"vmap: a size of the kernel is computed from argument '{names[k]}', so that "
                "argument cannot be batched", kernel=program.name,
                hint=f"pass in_axes=None for '{names[k]}'")
    renamed = dict(zip(src.program.inputs, inputs, strict=True))
    eqns = tuple(e.__class__(e.prim, tuple(renamed.get(a, a) if isinstance(a, Var) else a
                                           for a in e.inputs), e.params, e.outs, e.loc)
                 for e in src.program.eqns)
    outputs = tuple(renamed.get(a, a) if isinstance(a, Var) else a for a in src.program.outputs)
    sized = src.program.replace(inputs=tuple(inputs), eqns=eqns, outputs=outputs)
    return DimSource(src.symbol, src.index, src.axis, sized)


def _lane_symbol(name: str, size_name: str) -> str:
    return f"{name}.{size_name}"


def _batch_checks(program: Program, names: Sequence[str], in_axes: Sequence[int | None],
                  size_name: str) -> tuple[Check, ...]:
    first = next(i for i, a in enumerate(in_axes) if a is not None)
    return tuple(
        Check("==", DimExpr.sym(_lane_symbol(names[k], size_name)), DimExpr.sym(size_name),
              "ValueError", f"vmap: argument '{names[k]}' has batch size {{lhs}} on axis "
              f"{axis} but '{names[first]}' has {{rhs}}")
        for k, axis in enumerate(in_axes) if axis is not None and k != first)
