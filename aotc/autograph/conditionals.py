"""The ``if`` statement of converted kernels (and conditional expressions, ``and`` and
``or``, which become one): :func:`if_stmt` on its state.

On a build-time test the taken branch runs as Python. On a traced one both branches
are traced into a conditional, after settling what the state holds on each path (see
:mod:`.statements`, whose helpers type values first assigned in a branch): the
variables unassigned or None on one path (:mod:`.optional`), arrays of different sizes
(:mod:`.joins`), Python lists of different lengths (laid out as arrays that stay
lists), strings and functions chosen by the test (:mod:`.texts`), and views of outer
arrays a branch chooses (:mod:`.chosen_views`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, cast

import numpy as np

from .. import lax
from ..numpy_api import pylists
from ..numpy_api.creation import full_from_dims
from ..shapes import DimExpr
from ..tracing.aliases import path_aliased
from ..tracing.bind import fresh
from ..tracing.bodies import UNDEFINED, flatten, unflatten
from ..tracing.control import BranchArity, BranchTypes
from ..tracing.tracer import Tracer
from . import chosen_views, joins, optional, resizing, statements
from .returns import RET
from .statements import Body, State, as_bool, lift, traced, typed_returns
from .texts import Path, Text, is_constant, replaced, strings_in, union
from .written import Written


def if_stmt(test: Any, then: Body, orelse: Body, state: State, names: Sequence[str],
            site: Sequence[Any] = (), written: Sequence[str] = ()) -> State:
    """``if test: then else: orelse``, each taking and returning the state (``site``:
    what identifies the construct, if not its bodies' code)."""
    if not traced(test):
        return then(state) if test else orelse(state)
    items_of = Written(state, names, written, lift)
    state = items_of.state
    site = site or (then, orelse)
    then, orelse = items_of.body(then), items_of.body(orelse)
    return items_of.inside(_if(test, then, orelse, state, names, site))


statements.if_stmt = if_stmt


def _if(test: Any, then: Body, orelse: Body, state: State, names: Sequence[str],
        site: Sequence[Any]) -> State:
    state = typed_returns(state, names, [then, orelse])
    while True:
        unified = optional.known(site, state)
        try:
            if unified is None:
                return _cond(test, then, orelse, state, names, None)
            return _cond(test, unified.body(then), unified.body(orelse), unified.wrap(state),
                         names, unified)
        except optional.Unassigned:  # assigned in one branch only: unbound in the other
            slots = [i for i, v in enumerate(state) if v is UNDEFINED and names[i] != RET]
            state = optional.unbound(typed_returns(state, names, [then, orelse], every=True),
                                     names, slots)
        except optional.NoneOnAPath:  # a branch gives None: which variables are optional?
            optional.remember(site, state, optional.unify(state, [then, orelse], False))


def _cond(test: Any, then: Body, orelse: Body, state: State, names: Sequence[str],
          unified: optional.Unified | None, joined: dict[int, joins.Join] | None = None,
          listed: Listed | None = None,
          strings: Strings | None = None, starts_of: dict[int, int] | None = None) -> State:
    """The conditional; ``joined``: the leaves (indices among the flattened values the
    branches give) whose arrays differ in size, laid out in one buffer (:mod:`.joins`);
    ``listed``: the variables holding Python lists of different lengths on the two
    paths (``return [2]`` before ``return [n, n + 1]``), made arrays that stand for
    lists, which are then joined so (an empty one in the dtype of the other path's
    items); ``strings``: the variables holding strings (or functions), with every one
    either branch gives them (each a :class:`~.texts.Text` over them); ``starts_of``:
    the variables each branch gives as a view of one outer array, whose window starts
    (this many) the branches also give as values (:mod:`.chosen_views`)."""
    # (a string is a constant each branch reads as it is, not a value passed in)
    known = [i for i, v in enumerate(state) if v is not UNDEFINED and not is_constant(v)]
    listed = listed or {}
    #: per branch trace, the dtype of each list it gives (a Python list's first item's,
    #: a laid-out one's): an empty list's on the other path, when the two are joined
    kinds: list[dict[int, np.dtype | None]] = []
    joined = joined or {}
    strings = strings or {}
    #: per branch trace, the strings it gave, by place
    texts: list[Strings] = []
    #: per branch, per variable: its number of leaves, if it is a Python list
    lengths: list[list[int | None]] = []
    trees: list[tuple[Any, int]] = []  # each branch's values: structure, leaf count
    #: per branch (0 orelse, 1 then), per joined leaf: the array from outside it, if one
    sources: dict[int, dict[int, Any]] = {}
    outer_leaves = [flatten(state[i])[0] for i in known]
    #: the variables a branch gives a list laid out as an array (still lists after it)
    laid: set[int] = set()
    #: per branch (0 orelse, 1 then), the views of outer arrays it gives (.chosen_views)
    views: dict[int, chosen_views.Seen] = {}

    def branch(fn: Body, side: int) -> Callable[..., State]:
        def run(*values: Any) -> State:
            full = list(state)
            for i, v in zip(known, values, strict=True):
                full[i] = v
            out = fn(tuple(full))
            if any(value is UNDEFINED for value in out):
                raise optional.Unassigned
            lengths.append([len(flatten(v)[0]) if isinstance(v, list) else None for v in out])
            laid.update(i for i, v in enumerate(out) if isinstance(v, Tracer) and v.list_like)
            views[side] = chosen_views.seen_views(out)
            kinds.append({i: _item_dtype(v[0]) if isinstance(v, list) else v.dtype
                          for i, v in enumerate(out) if (isinstance(v, list) and v) or (
                              isinstance(v, Tracer) and v.list_like and v.ndim == 1)})
            out = tuple(_laid_out_list(v, listed[i]) if i in listed else v
                        for i, v in enumerate(out))
            out = _strings_chosen(out, strings, texts)
            if unified is None:
                optional.check_body(out)
            leaves, tree = flatten(out)
            trees.append((tree, len(leaves)))
            pairs = joins.operand_pairs([flatten(v)[0] for v in values], outer_leaves)
            sources[side] = {k: joins.outside(leaves[k], pairs) for k in joined}
            given = cast(tuple[Any, ...], unflatten(tree, [joined[k].pad(v) if k in joined
                                                           else v for k, v in enumerate(leaves)]))
            if starts_of is not None:
                given = (*given, chosen_views.window_starts(out, starts_of))
            return given
        return run

    try:
        try:
            result = lax.cond(as_bool(test), branch(then, 1), branch(orelse, 0),
                              *(state[i] for i in known))
        except _Strings as found:
            return _cond(test, then, orelse, state, names, unified, joined, listed,
                         {**strings, **found.options})
        except BranchArity:  # lists of different lengths (one laid out, maybe)
            ragged = _ragged(lengths, laid)
            if not ragged or ragged <= listed.keys():
                raise
            seen = {i: dtype for kind in kinds[-2:] for i, dtype in kind.items()}
            return _cond(test, then, orelse, state, names, unified, joined,
                         {**listed, **{i: seen.get(i) for i in ragged}}, strings)
        if not joined:
            starts = None
            if starts_of is not None:
                *kept, starts = result
                result = tuple(kept)
            else:
                wanted = chosen_views.starts_wanted(views[0], views[1])
                if wanted:  # windows the branches choose by values of their own
                    return _cond(test, then, orelse, state, names, unified, joined, listed,
                                 strings, wanted)
            chosen_views.chosen_views(result, names, as_bool(test), views[0], views[1],
                                      starts)
            return _strings_again(_lists_again(result, listed.keys() | laid))
        tree, count = trees[0]
        leaves, at = flatten(result)[0], 0
        values = []
        for k in range(count):
            width = joined[k].width if k in joined else 1
            part = leaves[at:at + width]
            if k in joined:
                made = joins.Joined(part[0], part[1:])
                value = fresh(made.laid_out(joined[k]))
                joins.remember_layout(value, made)
                for taken, source in ((~as_bool(test), sources[0]),
                                      (as_bool(test), sources[1])):
                    path_aliased(value, source[k], taken)
                values.append(value)
            else:
                values.append(part[0])
            at += width
        joined_state = unflatten(tree, values)
        chosen_views.chosen_views(joined_state, names, as_bool(test), views[0], views[1])
        return _strings_again(_lists_again(joined_state, listed.keys() | laid))
    except BranchTypes as mismatch:
        # ``return [2]`` on one path, a list grown at run time on the other: both laid out
        ragged = _ragged(lengths, laid) if len(lengths) >= 2 else frozenset()
        if ragged and not ragged <= listed.keys():
            seen = {i: dtype for kind in kinds[-2:] for i, dtype in kind.items()}
            return _cond(test, then, orelse, state, names, unified, joined,
                         {**listed, **{i: seen.get(i) for i in ragged}}, strings)
        leaf = _unjoined_leaf(mismatch.index, joined)
        join = joins.joinable(mismatch) if leaf is not None and leaf not in joined else None
        if leaf is not None and join is not None:  # different sizes: joined in one buffer
            before = flatten(state)[0]
            front = resizing.carried_front(before[leaf]) if leaf < len(before) else None
            if front is not None and front.dtype == join.dtype:
                join.passing(front)
            return _cond(test, then, orelse, state, names, unified, {**joined, leaf: join},
                         listed, strings)
        name = _name_of_leaf(state, names, mismatch.index if leaf is None else leaf)
        if name is None:
            raise
        what = "the kernel returns values of" if name == RET else \
            f"the two branches of this if give variable '{name}'"
        raise BranchTypes(mismatch.index, mismatch.types, what) from None


#: Strings in a conditional's values, by where they are (a variable's index, then the
#: path down its tuples and lists), with the strings each may be.
Strings = dict[Path, tuple[str, ...]]


class _Strings(Exception):  # noqa: N818 - a signal to trace the conditional again
    """The branches give strings not yet known to be among their options."""

    def __init__(self, options: Strings) -> None:
        super().__init__()
        self.options = options


def _strings_chosen(out: State, strings: Strings, texts: list[Strings]) -> State:
    """A branch's values with each string a :class:`~.texts.Text` over the strings its
    place may hold (``strings``); ``texts`` notes what this branch gave. Once both
    branches have given strings not among those, :class:`_Strings` says which."""
    seen = strings_in(out)
    texts.append(seen)
    if len(texts) >= 2:  # (each trace of a branch appends: the last two are then, orelse)
        wanted = {p: union(*(t.get(p, ()) for t in texts[-2:]))
                  for p in sorted({*texts[-2], *texts[-1]})}
        new = {p: union(strings.get(p, ()), o) for p, o in wanted.items()
               if not set(o) <= set(strings.get(p, ()))}
        if new:
            raise _Strings(new)
    for path, mine in seen.items():  # (its own strings, until both branches are known)
        known = strings.get(path, ())
        out = replaced(out, path, lambda v, o=known if set(mine) <= set(known) else mine:
                       Text.of(v, o))
    return out


def _strings_again(state: State) -> State:
    """The state after a conditional: a Text that can only be one string is that string."""
    for path in strings_in(state):
        state = replaced(state, path, lambda v: v.options[0] if isinstance(v, Text)
                         and len(v.options) == 1 else v)
    return state


#: Variables whose Python lists differ in length on the two paths, with the dtype an
#: empty one is laid out in (None where neither path gave an item).
Listed = dict[int, np.dtype | None]


def _ragged(lengths: list[list[int | None]], laid: AbstractSet[int]) -> frozenset[int]:
    """The variables that the last two branch traces give as lists of different lengths,
    or as a Python list on one path and a list laid out as an array on the other."""
    return frozenset(i for i, (a, b) in enumerate(zip(*lengths[-2:], strict=True))
                     if (a is not None and b is not None and a != b)
                     or ((a is None) != (b is None) and i in laid))


def _item_dtype(item: Any) -> np.dtype | None:
    """The dtype of a list item that is a number (Python's weak one: int64, float64)."""
    if isinstance(item, Tracer) and item.ndim == 0:
        return item.dtype
    if isinstance(item, (bool, int, float, complex, np.generic)):
        return np.asarray(item).dtype
    return None


def _laid_out_list(value: Any, dtype: np.dtype | None) -> Any:
    """A branch's list as an array standing for it; an empty one in ``dtype``."""
    if isinstance(value, list) and not value and dtype is not None:
        return pylists.as_list_array(full_from_dims((DimExpr.const(0),), 0, dtype))
    return pylists.as_list_array(value)


def _lists_again(state: State, listed: AbstractSet[int]) -> State:
    """The state after a conditional, the variables in ``listed`` (Python lists of
    different lengths on the two paths, joined as arrays) standing for lists again."""
    return tuple(pylists.as_list_array(v) if i in listed else v for i, v in enumerate(state))


def _unjoined_leaf(index: int, joined: dict[int, joins.Join]) -> int | None:
    """The leaf (before joining) whose output is flattened output ``index`` of branches
    that join ``joined`` (None: one of a joined array's sizes)."""
    at = leaf = 0
    while at < index:
        at += joined[leaf].width if leaf in joined else 1
        leaf += 1
    return leaf if at == index else None


def _name_of_leaf(state: State, names: Sequence[str], index: int) -> str | None:
    """The state variable that flattened leaf ``index`` of the branches' outputs is in."""
    start = 0
    for value, name in zip(state, names, strict=True):
        count = len(flatten(value)[0])
        if start <= index < start + count:
            return name
        start += count
    return None
