"""The C calling convention between emitted objects and the wrapper.

For each compiled overload with symbol prefix ``P`` the object file defines::

    typedef struct { void *data; const int64_t *shape; const int64_t *strides; } aotc_array;

    typedef int64_t (*aotc_body_fn)(void *ctx, int64_t begin, int64_t end);
    typedef struct aotc_runtime {
        int64_t (*poll)(struct aotc_runtime *);
        int64_t detail[4];
        int64_t (*parallel_for)(struct aotc_runtime *, aotc_body_fn body, void *ctx,
                                int64_t chunks);
        struct aotc_random *(*random)(struct aotc_runtime *, int64_t generator);
        uint64_t argument_bits;   /* bit i: scalar argument i is a Python number, or
                                     array argument i is C-contiguous */
        int64_t threads;          /* threads parallel_for runs chunks on (0 or 1: one) */
    } aotc_runtime;
    typedef struct aotc_random {  /* an MT19937 state with its cached normal */
        uint32_t key[624]; int32_t pos, has_gauss; double gauss; int64_t ready;
    } aotc_random;

    int64_t P_shapes(void *const *argv, int64_t *out_dims, int64_t *info);
    int64_t P(void *const *argv, void *const *outv, int64_t *out_dims, void *scratch,
              aotc_runtime *rt);

``argv[i]`` points at an ``aotc_array`` for an array parameter (strides in bytes, any
sign, any layout) or at the value of a scalar parameter, stored in its dtype (bool as
one byte holding 0 or 1).

``P_shapes`` evaluates the program's size checks and writes the dims of every output,
concatenated in order (an output of rank r takes r slots), ``info[0]`` = bytes of
scratch needed and ``info[3]`` = an estimate of the elements the kernel touches (the
wrapper releases the GIL when it is large, whatever the sizes of the arguments). It
returns 0, or the 1-based index of the first failing :class:`~aotc.ir.Check`, with that
check's left and right sides in ``info[1]`` and ``info[2]`` so the wrapper can format
its message, or a negative code from
:data:`SHAPE_ERRORS`: every size the kernel will compute with is evaluated there with
overflow-checked arithmetic and proven non-negative, so ``P`` may assume valid sizes.

``P`` runs the kernel. ``outv[j]`` points at the data of output j: C-contiguous and
sized from ``P_shapes`` (a scalar output is one element). A size known only while the
kernel runs (a selection ``x[x > 0]``, a slice with runtime bounds) is reported by
``P_shapes`` as its upper bound, so the buffer is big enough; ``P`` then writes every
output's actual dims into ``out_dims`` (the same slots): output j is C-contiguous with
those dims at the start of its buffer. ``scratch`` points at
``info[0]`` bytes aligned to :data:`SCRATCH_ALIGN` (may be NULL when 0). It returns 0,
or a code from :data:`KERNEL_ERRORS`. Inputs never alias outputs or scratch.

``rt`` may be NULL. When it is not and ``rt->poll`` is set, long-running loops call
``rt->poll(rt)`` about every millisecond of work; a nonzero answer makes ``P`` return
:data:`INTERRUPTED` at once (the wrapper's hook checks for Ctrl-C and other signals).
A caller may embed the struct at the start of a larger one of its own.

A kernel compiled with ``parallel = true`` splits its large loop nests into ``chunks``
numbered ``0..chunks-1`` (how many depends on the sizes only, never on threads) and,
when ``rt`` and ``rt->parallel_for`` are set and the work is large, calls
``rt->parallel_for(rt, body, ctx, chunks)``; otherwise it calls ``body(ctx, 0, chunks)``
itself. The hook must run ``body(ctx, k, k + 1)`` (or any ``body(ctx, i, j)`` covering
each chunk once) for every chunk, on any threads, in any order, and return 0, or the
nonzero code of a failing chunk (it may skip the chunks not yet started after a failure),
or :data:`INTERRUPTED` when its caller's ``rt->poll`` asked to stop (only the calling
thread may poll). Chunks never write the same memory, and a reduction's partial results
are combined in chunk order after the hook returns, so results do not depend on the
threads. A body never calls the hook again (no nested parallelism) and never polls.

A kernel that grows Python lists, sets or dicts in loops of unknown length keeps them in
memory it allocates while it runs (:mod:`aotc.ops.containers`), linked from
``rt->heap``, and frees all of it before ``P`` returns, on every path: the caller sets
``rt->heap`` to NULL (``P`` uses a runtime of its own when ``rt`` is NULL).

A kernel calling ``numpy.random`` (Python's ``random``) asks ``rt->random(rt, 0)``
(``rt->random(rt, 1)``) for the calling thread's generator state at its first draw of
each call; the hook returns a seeded state
(``ready`` nonzero; ``pos`` 624 makes the next draw regenerate the key). The wrapper's
gives each thread its own, seeded from the OS, again in a forked child. Without ``rt``
or the hook, a kernel draws from a state its object holds, seeded with MT19937's default
5489 at the first draw (not thread-safe: one caller thread at a time).
"""

from __future__ import annotations

SCRATCH_ALIGN = 64
INFO_SLOTS = 4
#: ``aotc_random``: the key's bytes, and the whole struct's.
RANDOM_KEY_BYTES, RANDOM_STATE_BYTES = 624 * 4, 2520

#: Negative return codes of ``P_shapes``: code -> (exception type name, message).
SHAPE_ERRORS: dict[int, tuple[str, str]] = {
    -1: ("ValueError", "array is too big; `arr.size * arr.dtype.itemsize` is larger than "
                       "the maximum possible size."),
    -2: ("ValueError", "negative dimensions are not allowed"),
}
TOO_BIG, NEGATIVE_DIMENSION = -1, -2

#: Nonzero return codes of ``P`` shared by every program: code -> (exception, message).
KERNEL_ERRORS: dict[int, tuple[str, str]] = {
    1: ("ValueError", "Integers to negative integer powers are not allowed."),
    2: ("IndexError", "index {lhs} is out of bounds for an axis with size {rhs}"),
    5: ("KeyboardInterrupt", "the kernel was interrupted"),
    6: ("ValueError", "negative dimensions are not allowed"),
    7: ("MemoryError", "out of memory for a thread's working buffers"),
    8: ("RecursionError", "maximum recursion depth exceeded in a compiled function"),
    9: ("MemoryError", "out of memory for a list, set or dict of the kernel"),
}
#: ``P``'s code when the runtime's poll hook asked it to stop.
INTERRUPTED = 5
#: ``P``'s code when a value made inside a loop body or branch has a negative size.
NEGATIVE_IN_KERNEL = 6
#: ``P``'s code when a parallel chunk could not allocate its buffers.
OUT_OF_MEMORY = 7
#: ``P``'s code when compiled recursion goes deeper than ``aotc.ops.calls.DEPTH_LIMIT``.
RECURSION_TOO_DEEP = 8
#: ``P``'s code when a list, set or dict the kernel grows cannot get memory.
CONTAINER_OUT_OF_MEMORY = 9
#: ``P``'s codes from here on are the program's own errors, in the order of
#: :func:`aotc.ir.runtime_errors` (its ``raise_if`` and in-body ``check`` equations). A
#: failing check stores its two sides in ``rt->detail`` (when ``rt`` is not NULL), for
#: the message's ``{lhs}`` and ``{rhs}``; a ``raise`` up to :data:`DETAILS` values of its
#: message (see :mod:`aotc.tracing.messages`).
FIRST_PROGRAM_ERROR = 100
#: ``rt->detail``'s length.
DETAILS = 4


def symbol_prefix(module: str, function: str, overload: int) -> str:
    """The C symbol prefix of one overload: ``aotc_<module>_<function>_<k>``."""
    return f"aotc_{module.replace('.', '_')}_{function}_{overload}"
