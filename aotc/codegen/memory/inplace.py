"""Buffer planning for updates: which writes happen in place, which buffers loops share.

Writes are functional in the IR: ``y[i] = v`` is ``update_slice(y, v, start=(i,))``, a new
version of ``y``. Lowered naively each version is a copy, and a loop carrying ``y``
copies it every iteration (``ema`` becomes O(n²)). This pass decides, before any code
is emitted, where every version lives:

- an update whose base is *dead afterwards* (neither the base nor any view of its bytes
  is read by a later equation, an output or a write into an argument) writes into the
  base's buffer; otherwise it copies the base once into a fresh buffer. When the update
  operand itself may read the base's bytes (``x[1:] = x[:-1]``) it is staged first;
- a loop's array carry lives in one buffer for the whole loop: the initial value's own
  buffer when that value dies at the loop, else a fresh one filled once. The body sees
  the carry as a writable buffer, so its update chain runs in place, and the back edge
  copies nothing when the body's result *is* that buffer (``Move.SKIP``); it copies
  (or stages, when the value may live in a buffer being overwritten) only when the body
  really needs both versions, and when the body made that other version's buffer itself
  (``u = new``) the two buffers trade places instead (``Move.SWAP``). ``cond`` results
  take over a dying operand the same way, and a branch builds a fresh result in the
  ``cond``'s own buffer;
- a write into an argument (``Program.writebacks``) goes straight into the caller's
  array when the update chain starting at the argument ends in the written value (or
  starts at a value computed elementwise from the dying argument, which then takes
  over its buffer: :mod:`.argwrites`). The entry point checks at run time that such an
  array neither overlaps itself nor any other argument, and otherwise works on a
  scratch copy (see :mod:`.overlap`);
- destination passing: when an in-place update's operand is a fresh value read by the
  update only, and nothing reads the base between its producer and the update, the
  producer writes straight into the block (``Update.DIRECT``): ``y[1:-1] = f(x)``
  makes no temporary and no copy.

Why a codegen plan rather than an IR pass marking equations: in-placeness is a property
of buffers, which only codegen knows (a slice is a view of its operand's bytes, a reshape
is a view or a copy depending on contiguity, a loop carry is one buffer for the whole
loop), and planning right before lowering sees the final equation order, after every
pass (fusion included) has moved things around.

Liveness is per program: a use inside a nested program counts as a use by the equation
holding it (nested programs are closed: outer values reach them only as operands).
The result is a :class:`BufferPlan`; :mod:`.layout` turns its buffer classes into homes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ...ir import Atom, Eqn, Program, Var, nested_programs
from ...ops.calls import call_p, first_written, written
from ...ops.control import cond_p
from ...ops.core import ALL_PRIMITIVES, ELEMENTWISE, Primitive
from ...ops.fusion import fusion_p
from ...ops.linalg import dot_general_p
from ...ops.shape import bind_dim_p, broadcast_in_dim_p, refine_shape_p, reshape_p, update_slice_p
from ...shapes import DimExpr, axis_span, bound_symbols
from ..core.carries import LOOP_FORMS, LoopForm
from ..core.values import only_unit_axes_differ
from .argwrites import chain_start, overwrites_argument, targets
from .planner import BufferPlan, Input, Move, Planner, Rule, Scope, Update, Value
from .trades import build_in_place, swappable
from .viewkinds import VIEW_PRIMITIVES, reshape_is_view, view_keeps_contiguity

UPDATES = frozenset({update_slice_p})
#: Primitives whose lowering writes into whatever View ``ctx.home`` gives, strided or not.
DIRECT_PRODUCERS = frozenset(
    {p for p in ALL_PRIMITIVES.values() if p.has(ELEMENTWISE)} | {fusion_p, dot_general_p})
__all__ = ["BufferPlan", "Move", "Update", "plan_buffers"]


def _fresh(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> None:
    """Any other equation writes its array results into fresh buffers (or, for a value
    written into an argument, maybe the argument's own, see :mod:`.argwrites`); a nested
    program of an unknown form only reads its inputs."""
    for nested in nested_programs(eqn):
        planner.program(nested, [None] * len(nested.inputs))
    _results(planner, scope, p, eqn)


def _results(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> None:
    for out in eqn.outs:
        if not out.type.ndim:
            continue
        index = planner.targets.get(out)
        into = None
        if index is not None and eqn.prim in DIRECT_PRODUCERS:
            into = overwrites_argument(planner, scope, p, eqn, out, scope.inputs[index])
        if into is None:
            planner.version(scope, out)
            continue
        value = planner.values[into]
        planner.overwrite[out] = into
        planner.written.add(planner.find(into))
        planner.version(scope, out, contiguous=value.contiguous, caller=value.caller,
                        like=into)


def _view(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> None:
    out, x = eqn.outs[0], eqn.inputs[0]
    if not out.type.ndim:
        return  # a register
    if eqn.prim is broadcast_in_dim_p and not x.type.ndim and _overwritten(scope, out):
        planner.version(scope, out)  # np.empty filled by writes: a buffer never filled
        return
    value = planner.values.get(x) if isinstance(x, Var) else None
    contiguous = value is None or value.contiguous  # a broadcast scalar is "contiguous"
    if eqn.prim is reshape_p and not reshape_is_view(eqn, x.type.ndim == 0 or contiguous):
        planner.version(scope, out)
        return
    planner.define(scope, out, Value(
        planner.roots(x), contiguous=(x.type.ndim == 0 or contiguous)
        and view_keeps_contiguity(eqn), caller=value is not None and value.caller))


def _overwritten(scope: Scope, base: Var) -> bool:
    """Whether the chain of in-place updates starting at ``base`` writes every element
    before anything else reads it (``out = np.empty((n, n, 3)); out[:, :, 0] = ...``
    for each k): then ``base``'s own value is never seen and need not be filled."""
    blocks: list[tuple[tuple[DimExpr, ...], tuple[DimExpr, ...]]] = []
    atom = base
    while len(scope.uses.get(atom, ())) == 1:
        update = scope.eqns[scope.uses[atom][0]] if scope.uses[atom][0] < len(scope.eqns) \
            else None
        if update is None or update.prim is not update_slice_p or update.inputs[0] is not atom \
                or set(update.params["step"]) != {1}:
            break
        blocks.append((tuple(update.params["start"]), tuple(update.inputs[1].type.shape)))
        atom = update.outs[0]
    return covers(tuple(base.type.shape), blocks)


def covers(shape: tuple[DimExpr, ...],
           blocks: Sequence[tuple[tuple[DimExpr, ...], tuple[DimExpr, ...]]]) -> bool:
    """Whether the blocks (starts, sizes) together cover an array of ``shape``: one block
    the whole of it, or blocks spanning every axis but one of constant size, along which
    their constant spans leave no gap."""
    if any(all(s.is_const and s.value == 0 for s in start) and size == shape
           for start, size in blocks):
        return True
    for axis, whole in enumerate(shape):
        if not whole.is_const:
            continue
        spans = [span for start, size in blocks
                 if (span := axis_span(shape, start, size, axis)) is not None]
        reached = 0
        for low, high in sorted(spans):
            if low > reached:
                break
            reached = max(reached, high)
        if reached >= whole.value:
            return True
    return False


def _update(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> None:
    base, operand, out = eqn.inputs[0], eqn.inputs[1], eqn.outs[0]
    if not out.type.ndim:
        return
    if not planner.eligible(scope, base, p):
        planner.version(scope, out)
        return
    assert isinstance(base, Var)
    value = planner.values[base]
    reads = planner.values.get(operand) if isinstance(operand, Var) else None
    source = _direct(planner, scope, p, eqn)
    if source is not None:
        planner.updates[eqn] = Update.DIRECT
        planner.direct[source] = eqn
        planner.disown(source)
    elif reads is not None and (base in reads.roots or (value.caller and reads.caller)):
        planner.updates[eqn] = Update.STAGED
    else:
        planner.updates[eqn] = Update.INPLACE
    planner.written.add(planner.find(base))
    planner.version(scope, out, contiguous=value.contiguous, caller=value.caller, like=base)


def _identity_source(scope: Scope, atom: Atom, p: int) -> Var | None:
    """The value ``atom`` is, through views that change nothing but its type (a
    ``refine_shape``, an axis-for-axis ``broadcast_in_dim`` that stretches nothing, a
    ``reshape`` adding or dropping size-1 axes), each read only by the next; None
    unless ``atom`` is read by equation ``p`` only."""
    while isinstance(atom, Var) and scope.uses.get(atom) == [p]:
        q = scope.made.get(atom, -1)
        view = scope.eqns[q] if q >= 0 else None
        if view is None or not _is_identity_view(view):
            return atom
        atom, p = view.inputs[0], q
    return None


def _is_identity_view(eqn: Eqn) -> bool:
    if eqn.prim is refine_shape_p:
        return True
    if eqn.prim is reshape_p:  # out[:, :, 0] = f(x): f's (n, n) result is the (n, n, 1) block
        return only_unit_axes_differ(eqn.inputs[0].type.shape, eqn.outs[0].type.shape)
    if eqn.prim is not broadcast_in_dim_p:
        return False
    x, out = eqn.inputs[0].type.shape, eqn.outs[0].type.shape
    return (tuple(eqn.params["broadcast_dimensions"]) == tuple(range(len(out)))
            and len(x) == len(out) and not any(
                d.is_const and d.value == 1 and not (o.is_const and o.value == 1)
                for d, o in zip(x, out, strict=True)))


def _direct(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> Var | None:
    """The value whose producer can write it straight into in-place update ``p``'s
    block (destination passing): ``y[1:-1] = f(x)`` then makes no temporary and no copy.

    The operand must be a fresh buffer read by this update only, made by a producer that
    writes any strided destination (:data:`DIRECT_PRODUCERS`), with a static block
    (``update_slice``) of a base that exists before the producer runs. Nothing may read
    the base's bytes between the producer and the update, as they change early; the
    producer itself may read the base only elementwise over the whole base (``x += 1``:
    each element is read before the same element is written).
    """
    base, operand = eqn.inputs[0], _identity_source(scope, eqn.inputs[1], p)
    if eqn.prim is not update_slice_p or operand is None or not isinstance(base, Var) \
            or operand not in planner.owned:
        return None
    q = scope.made.get(operand, -1)
    if q < 0 or scope.eqns[q].prim not in DIRECT_PRODUCERS or scope.made[base] >= q:
        return None
    bound_at = {e.params["symbol"]: k for k, e in enumerate(scope.eqns) if e.prim is bind_dim_p}
    placed = [*eqn.params["start"], *(s for s in eqn.params["step"] if isinstance(s, DimExpr))]
    if any(bound_at.get(name, -1) > q for expr in placed for name in bound_symbols(expr)):
        return None  # the block's start or step is a size bound after the producer runs
    whole = (eqn.inputs[1].type.shape == base.type.shape and set(eqn.params["step"]) <= {1}
             and all(s.is_const and s.value == 0 for s in eqn.params["start"]))
    for member in scope.members[base]:
        for use in scope.uses.get(member, ()):
            if q < use < p:
                return None
            if use == q and not (member is base and whole
                                 and scope.eqns[q].prim.has(ELEMENTWISE)):
                return None
    return operand


def _take_over(planner: Planner, scope: Scope, eqn: Eqn, k: int, out: Var,
               position: int) -> None:
    """Result ``k`` of ``eqn`` (``out``) lives in the buffer of operand ``position``,
    which dies at ``eqn``: a loop carry, a branch result or an array a call writes into
    is written there in place (``BufferPlan.reuse``)."""
    operand = eqn.inputs[position]
    assert isinstance(operand, Var)
    value = planner.values[operand]
    planner.reuse[(eqn, k)] = position
    planner.written.add(planner.find(operand))
    planner.version(scope, out, contiguous=value.contiguous, caller=value.caller,
                    like=operand)


def _loop(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> None:
    form = LOOP_FORMS[eqn.prim](eqn)
    for k, (init, result) in enumerate(zip(form.init, form.results, strict=True)):
        if not result.type.ndim:
            continue
        if planner.eligible(scope, init, p) and planner.exclusive(eqn, init):  # type: ignore[arg-type]
            _take_over(planner, scope, eqn, k, result, eqn.inputs.index(init))
        else:
            planner.version(scope, result)
    before = set(planner.owned)
    planner.program(form.body, _body_inputs(planner, form))
    moves = planner.region_moves(form.carry_out, form.carry_in)
    planner.moves[(eqn,)] = tuple(
        Move.SWAP if move is Move.COPY and swappable(planner, eqn, form, k, before) else move
        for k, move in enumerate(moves))
    if form.cond is not None:
        reads: dict[Var, Atom] = {v: a for a, v in form.cond_consts}
        reads.update(zip(form.cond.inputs[len(form.cond_consts):], form.results, strict=True))
        planner.program(form.cond, [_reading(planner, reads[v]) for v in form.cond.inputs])
    for out in eqn.outs[len(form.results):]:  # scan's stacked outputs
        planner.version(scope, out)


def _reading(planner: Planner, atom: Atom) -> Input:
    value = planner.values.get(atom) if isinstance(atom, Var) else None
    return Input.reading(value)


def _body_inputs(planner: Planner, form: LoopForm) -> list[Input | None]:
    """Consts and rows are read-only; each array carry is the writable slot buffer
    (the loop result's class), with the result's contiguity."""
    specs: dict[Var, Input | None] = {v: _reading(planner, a) for a, v in form.consts}
    specs.update({v: _reading(planner, a) for a, v in form.rows})
    for var, result in zip(form.carry_in, form.results, strict=True):
        if var.type.ndim:
            planner.parent[var] = var
            planner.join(var, result)
            state = planner.values[result]
            specs[var] = Input(True, state.contiguous, state.caller)
    return [specs.get(v) for v in form.body.inputs]


def _trace_back(program: Program, atom: Atom) -> int | None:
    """The input of ``program`` whose update chain ends in ``atom``, if any."""
    start = chain_start(program, atom, UPDATES)
    return program.inputs.index(start) if start in program.inputs else None


def _cond(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> None:
    branches: tuple[Program, ...] = eqn.params["branches"]
    operands = eqn.inputs[1:]
    # A dying operand's buffer may be taken over, also when other operands are views of
    # it (a resized array a loop carries and its front): the branches see those views
    # as views of it, so they overwrite it only after their last reads of them.
    views_of = {j: [i for i, v in enumerate(operands) if i != j and isinstance(v, Var)
                    and a in planner.roots(v)] for j, a in enumerate(operands)}
    bases = Counter(i for views in views_of.values() for i in views)  # per view: of how many
    dying = {j for j, a in enumerate(operands) if planner.eligible(scope, a, p)
             and all(not planner.is_version(operands[i]) and bases[i] == 1
                     for i in views_of[j])}
    claimed: dict[int, int] = {}  # operand -> result
    for k, out in enumerate(eqn.outs):
        if not out.type.ndim:
            continue
        for branch in branches:
            j = _trace_back(branch, branch.outputs[k])
            if j in dying and j not in claimed:
                claimed[j] = k
                break
    owner = {k: j for j, k in claimed.items()}
    for k, out in enumerate(eqn.outs):
        if k in owner:
            _take_over(planner, scope, eqn, k, out, 1 + owner[k])
        elif out.type.ndim:
            planner.version(scope, out)
    for b, branch in enumerate(branches):
        for j in dying:  # the branch may overwrite a dying operand's buffer
            planner.parent[branch.inputs[j]] = branch.inputs[j]
            planner.join(branch.inputs[j], operands[j])  # type: ignore[arg-type]
        inputs: list[Input | None] = []
        for j, operand in enumerate(operands):
            known = planner.values.get(operand) if isinstance(operand, Var) else None
            if j in dying and known is not None:
                inputs.append(Input(True, known.contiguous, known.caller))
            else:
                inputs.append(Input.reading(known) if known is not None else None)
        before = set(planner.owned)
        planner.program(branch, inputs,
                        {i: j for j in dying for i in views_of[j]})
        for k, out in enumerate(eqn.outs):
            if k not in owner and out.type.ndim:
                build_in_place(planner, branch, k, out, before)
        slots = [branch.inputs[owner[k]] if k in owner else out for k, out in enumerate(eqn.outs)]
        planner.moves[(eqn, b)] = planner.region_moves(branch.outputs, slots)


def _call(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> None:
    """A compiled function writes into the arrays it is given (``aotc.ops.calls``): each
    new version takes over its operand's buffer when that dies at the call and reaches
    it through this operand only, else a fresh buffer the call fills with a copy first.
    An array the function makes is written into a fresh buffer."""
    for out in eqn.outs[:first_written(eqn)]:
        if out.type.ndim:
            planner.version(scope, out)
    for k, position in enumerate(written(eqn), start=first_written(eqn)):
        operand, out = eqn.inputs[position], eqn.outs[k]
        if planner.eligible(scope, operand, p) and planner.exclusive(eqn, operand):  # type: ignore[arg-type]
            _take_over(planner, scope, eqn, k, out, position)
        else:
            planner.version(scope, out)


def _fused(planner: Planner, scope: Scope, p: int, eqn: Eqn) -> None:
    """A fusion computes its body in registers at each index: only its results are
    buffers."""
    _results(planner, scope, p, eqn)


RULES: dict[Primitive, Rule] = {
    fusion_p: _fused,
    **dict.fromkeys(VIEW_PRIMITIVES, _view),
    **dict.fromkeys(UPDATES, _update),
    **dict.fromkeys(LOOP_FORMS, _loop),
    cond_p: _cond,
    call_p: _call,
}


def plan_buffers(program: Program) -> BufferPlan:
    """Plan every buffer of ``program`` (see the module docstring)."""
    planner = Planner(RULES, _fresh, targets=targets(program, UPDATES))
    written = {index for index, atom in program.writebacks
               if atom is not program.inputs[index] and program.inputs[index].type.ndim}
    planner.program(program, [Input(k in written) for k in range(len(program.inputs))])
    slots = [program.inputs[index] for index, _ in program.writebacks]
    moves = []
    for slot, (_, atom) in zip(slots, program.writebacks, strict=True):
        if not slot.type.ndim or atom is slot or (
                planner.is_version(atom) and planner.find(atom) is planner.find(slot)):
            moves.append(Move.SKIP)
        elif isinstance(atom, Var) and planner.values[atom].caller:
            moves.append(Move.STAGE)  # it may read a caller's array that a write changes
        else:
            moves.append(Move.COPY)
    planner.moves[("writeback",)] = tuple(moves)
    inputs = {v: k for k, v in enumerate(program.inputs)}
    owned = set(planner.owned)
    return BufferPlan(
        buffer={v: planner.find(v) for v in planner.parent if planner.find(v) in owned},
        owned=tuple(planner.owned),
        caller=frozenset(v for v in program.inputs if v.type.ndim),
        contiguous=frozenset(v for v, value in planner.values.items() if value.contiguous),
        updates=dict(planner.updates), reuse=dict(planner.reuse), moves=dict(planner.moves),
        inplace_args=frozenset(inputs[c] for c in planner.written if c in inputs),
        direct=dict(planner.direct), overwrite=dict(planner.overwrite))
