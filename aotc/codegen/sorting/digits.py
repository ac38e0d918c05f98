"""The passes of an LSD radix sort over one row: which digits, their counts, the moves.

A pass per 8-bit digit (:data:`DIGIT_BITS`), least significant first, each a stable
counting sort. Which digits take a pass is a mask (bit ``d`` for digit ``d``):

- a digit on which every key agrees moves nothing: a first, cheap pass ORs together
  each key's difference from the first key (it vectorizes on contiguous rows), and only
  the digits where that is nonzero are ever counted or moved;
- the *shortcut*: a row of ``n`` keys is nearly in order once sorted by its most
  significant ``log2(n) + 4`` varying bits (about one key in 16 shares them with
  another, for random integers; floats take 12 bits more, for their exponent), so only
  those digits are counted and moved, and an
  insertion sort finishes the order, moving few elements. When too many keys share the
  sorted digits (the insertion sort gives up past a budget of moves), every varying
  digit is sorted after all: the answer is the same, only the first attempt is wasted.
  For 64-bit keys of a million elements this halves the passes, for 32-bit integers it
  saves one of four; 8 and 16-bit keys and 32-bit floats need every digit anyway.

Counting only the digits that will move also halves the histogram work, which costs as
much as a pass (one counter increment per digit per element).

Rows of 64-bit keys are read as several interleaved streams (:func:`streams_for`:
consecutive quarters or halves of the row), each with counters of its own: a stream's
slots for a digit value come after those of the streams before it, so the sort stays
stable. Skewed digits are why: when most keys share a digit value (a float's sign and
exponent), one counter set makes every increment wait for the previous one to be
stored; four sets make four independent chains (the top digit of a million normal
doubles: 2.2 ms down to 1.0). A stream's counts depend on the order the pass reads the
keys in, so each pass then counts its own digit first, in twice as many parts of the row
as there are streams (more chains). A digit that takes few values (:data:`FEW`) then
moves in that many streams too (few values make few write fronts, 8 x 256 of them do not
fit in L1); others in pairs of parts. With one stream, a single read of the input counts
every digit up front (cheaper, and measured better for 32-bit keys and narrower).
Argsort carries indices, and four streams of keys and indices run out of registers: it
takes two. (10^6 normal doubles: 4.84 ms with four streams, 4.47 ms so.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from ..core.builder import KernelBuilder
from ..core.dtypes import I1, I64, i64
from ..core.loops import for_range
from .rows import Local, Row, insertion_sort, packed
from .sortkeys import Keys

DIGIT_BITS = 8
RADIX = 1 << DIGIT_BITS
#: The most interleaved streams (each with its own counters) a row is read as.
STREAMS = 4
#: A digit taking at most this many values in a row is moved in twice as many streams.
FEW = 32


def streams_for(keys: Keys, indices: bool) -> int:
    """How many streams a sort of ``keys`` reads rows as (see the module docstring)."""
    if keys.width < 64:
        return 1
    return 2 if indices else STREAMS


def histogram_size(keys: Keys, indices: bool) -> int:
    """int64 counters :class:`Passes` needs: every digit's (one stream), or one digit's
    per part of the row (two per stream), reused by the next pass."""
    streams = streams_for(keys, indices)
    return (keys.digits(DIGIT_BITS) if streams == 1 else 2 * streams) * RADIX
#: Bits beyond log2(n) the shortcut sorts integer keys by (see the module docstring).
SHORTCUT_BITS = 4
#: More for floats: their top bits (sign and exponent) tell few keys apart; a million
#: normal doubles share their top 24 bits often enough to exhaust the insertion sort's
#: budget, and their top 32 rarely.
FLOAT_SHORTCUT_BITS = 12

#: Keys sampled to decide that a row is too crowded for the shortcut (:meth:`Passes._crowded`),
#: the adjacent equal samples that decide it, and the shortest row sampled.
SAMPLES = 128
CROWDED = 3
SAMPLED = 1 << 15

#: ``step(digit, first, last, into_a, shortcut)``: one pass (see :meth:`Passes.sort`).
Step = Callable[["Digit", ir.Value, ir.Value, ir.Value, ir.Value], None]
Read = Callable[[ir.Value], tuple[ir.Value, list[ir.Value]]]
Write = Callable[[ir.Value, list[ir.Value]], None]


@dataclass(frozen=True)
class Digit:
    """One digit's pass: its bit position and each stream's counters (each value's next
    slot)."""

    shift: ir.Value
    counters: tuple[ir.Value, ...]


def _intrinsic(b: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
    types = [a.type for a in args]
    fn = b.module.declare_intrinsic(name, [I64], ir.FunctionType(I64, types))
    return b.call(fn, list(args))


def shortcut_digits(b: ir.IRBuilder, keys: Keys, n: ir.Value) -> ir.Value:
    """How many of the most significant varying digits the shortcut sorts ``n`` keys by:
    enough for ``log2(n) + SHORTCUT_BITS`` bits (``FLOAT_SHORTCUT_BITS`` for floats)."""
    extra = FLOAT_SHORTCUT_BITS if keys.is_float else SHORTCUT_BITS
    length = b.sub(i64(64), _intrinsic(b, "llvm.ctlz", n, ir.Constant(I1, 0)))
    return b.udiv(b.add(length, i64(extra + DIGIT_BITS - 1)), i64(DIGIT_BITS))


def digit_of(b: ir.IRBuilder, keys: Keys, key: ir.Value, shift: ir.Value) -> ir.Value:
    """The i64 digit of ``key`` at bit ``shift`` (an i64)."""
    if keys.width <= DIGIT_BITS:
        return b.zext(key, I64)
    if keys.width < 64:
        shift = b.trunc(shift, keys.ty)
    return b.zext(b.and_(b.lshr(key, shift), ir.Constant(keys.ty, RADIX - 1)), I64)


def bump(b: ir.IRBuilder, counters: ir.Value, digit: ir.Value) -> ir.Value:
    """``counters[digit]++``, returning the old value (the element's output slot)."""
    slot = b.gep(counters, [digit], source_etype=I64)
    pos = b.load(slot, typ=I64, align=8)
    b.store(b.add(pos, i64(1)), slot, align=8)
    return pos


def _any(b: ir.IRBuilder, values: list[ir.Value]) -> ir.Value:
    """The OR of ``values``."""
    result = values[0]
    for value in values[1:]:
        result = b.or_(result, value)
    return result


def _has(b: ir.IRBuilder, mask: ir.Value, d: ir.Value | int) -> ir.Value:
    """i1: digit ``d`` is in ``mask``."""
    d = i64(d) if isinstance(d, int) else d
    return b.trunc(b.lshr(mask, d), I1)


class Passes:
    """The passes over one row of ``n`` raw values read from ``src``."""

    def __init__(self, b: KernelBuilder, keys: Keys, n: ir.Value, src: Row,
                 hist: ir.Value, indices: bool) -> None:
        self.b, self.keys, self.n, self.src, self.hist = b, keys, n, src, hist
        self.nstreams = streams_for(keys, indices)
        self.digits = keys.digits(DIGIT_BITS)

    def digit(self, d: ir.Value) -> Digit:
        """Digit ``d``'s pass: with one stream its counters (counted up front), turned
        into slots; with several, the counters every pass reuses."""
        b = self.b
        if self.nstreams == 1:
            return self._offsets(d)
        counters = tuple(b.gep(self.hist, [i64(s * RADIX)], source_etype=I64)
                         for s in range(2 * self.nstreams))
        return Digit(b.mul(d, i64(DIGIT_BITS)), counters)

    def streams(self, body: Callable[[ir.Value, int], None], k: int) -> None:
        """``body(i, stream)`` for every element ``i`` of the row, in ``k`` interleaved
        streams (``k`` divides ``2 * nstreams``): the row is cut into ``2 * nstreams``
        parts of ``n // (2 * nstreams)`` (the last one also takes what is left over) and
        stream ``s`` reads the ``s``-th ``k``-th of them, in order."""
        b = self.b
        parts = 2 * self.nstreams
        length = b.mul(b.udiv(self.n, i64(parts)), i64(parts // k))
        with for_range(b, length, "quad", unroll=True) as i:
            for s in range(k):
                body(b.add(i, b.mul(length, i64(s))), s)
        rest = b.mul(length, i64(k))
        with for_range(b, b.sub(self.n, rest), "rest", unroll=True) as j:
            body(b.add(rest, j), k - 1)

    def varying(self) -> ir.Value:
        """The mask of digits on which some key differs from the first (0: all equal).

        Also aligns the digits to the most significant bit on which keys differ: every
        key is read shifted left by as many bits as lie above it (:meth:`key`), which
        drops only bits all keys share and keeps their order. Without it a float's top
        digit (sign and exponent) is nearly constant in most rows (doubles in [0, 1)),
        and the shortcut's passes would sort fewer bits that tell keys apart."""
        b, keys, src = self.b, self.keys, self.src
        first = keys.key(b, src.load(b, i64(0)))
        differ = Local(b, keys.ty, ir.Constant(keys.ty, 0), "differ")
        contiguous = b.icmp_signed("==", src.stride, i64(keys.width // 8))
        with b.if_else(contiguous, likely=True) as (unit, strided):
            for branch, row in ((unit, Row(src.data, i64(keys.width // 8), keys.ty, 1)),
                                (strided, src)):
                with branch, for_range(b, self.n, "vary", unroll=True) as i:
                    key = keys.key(b, row.load(b, i))
                    differ.set(b.or_(differ.get(), b.xor(key, first)))
        bits = differ.get()
        zero = ir.Constant(keys.ty, 0)
        ctlz = b.module.declare_intrinsic("llvm.ctlz", [keys.ty],
                                          ir.FunctionType(keys.ty, [keys.ty, I1]))
        lead = b.call(ctlz, [bits, ir.Constant(I1, 0)])
        self.shift = b.select(b.icmp_unsigned("==", bits, zero), zero, lead)
        ones = ir.Constant(keys.ty, (1 << keys.width) - 1)
        self.shared = b.and_(first, b.not_(b.lshr(ones, self.shift)))
        bits = b.shl(bits, self.shift)
        mask: ir.Value = i64(0)
        for d in range(self.digits):
            digit = digit_of(b, keys, bits, i64(d * DIGIT_BITS))
            mask = b.or_(mask, b.shl(b.zext(b.icmp_unsigned("!=", digit, i64(0)), I64), i64(d)))
        return mask

    def key(self, raw: ir.Value) -> ir.Value:
        """The sort key of a raw value, aligned by :meth:`varying` (which runs first)."""
        return self.b.shl(self.keys.key(self.b, raw), self.shift)

    def value(self, key: ir.Value) -> ir.Value:
        """The raw value of an aligned key."""
        b = self.b
        return self.keys.unkey(b, b.or_(b.lshr(key, self.shift), self.shared))

    def histogram(self, counted: ir.Value) -> None:
        """With one stream: the counts of every digit in ``counted``, in one pass over
        the input."""
        b, keys = self.b, self.keys
        with for_range(b, i64(self.digits * RADIX), "clr") as i:
            b.store(i64(0), b.gep(self.hist, [i], source_etype=I64), align=8)
        flags = [_has(b, counted, d) for d in range(self.digits)]
        with for_range(b, self.n, "hist", unroll=True) as i:
            key = self.key(self.src.load(b, i))
            for d, flag in enumerate(flags):
                with b.if_then(flag, likely=True):
                    counters = b.gep(self.hist, [i64(d * RADIX)], source_etype=I64)
                    bump(b, counters, digit_of(b, keys, key, i64(d * DIGIT_BITS)))

    def _offsets(self, d: ir.Value) -> Digit:
        """With one stream: turn digit ``d``'s counts into each value's first slot."""
        b = self.b
        counters = b.gep(self.hist, [b.mul(d, i64(RADIX))], source_etype=I64)
        total = Local(b, I64, i64(0), "total")
        with for_range(b, i64(RADIX), "pre") as v:
            slot = b.gep(counters, [v], source_etype=I64)
            count = b.load(slot, typ=I64, align=8)
            b.store(total.get(), slot, align=8)
            total.set(b.add(total.get(), count))
        return Digit(b.mul(d, i64(DIGIT_BITS)), (counters,))

    def _count(self, digit: Digit, read: Read) -> ir.Value:
        """Count the digit's values among the keys ``read`` gives, in ``2 * nstreams``
        parts of the row, and make the counts each value's first output slot in each
        stream (after its slots in the streams before). Returns i1: the pass moves the
        keys in ``2 * nstreams`` streams, as counted, because the digit takes few values
        (:data:`FEW`: few write fronts, and the more chains of increments the better
        when most keys share a value); else in ``nstreams``, each two parts merged."""
        b, wide = self.b, 2 * self.nstreams
        with for_range(b, i64(wide * RADIX), "clr") as i:
            b.store(i64(0), b.gep(self.hist, [i], source_etype=I64), align=8)

        def count(i: ir.Value, part: int) -> None:
            bump(b, digit.counters[part], digit_of(b, self.keys, read(i)[0], digit.shift))

        self.streams(count, wide)
        values = Local(b, I64, i64(0), "values")
        with for_range(b, i64(RADIX), "few") as v:
            found = _any(b, [b.load(b.gep(c, [v], source_etype=I64), typ=I64, align=8)
                             for c in digit.counters])
            values.set(b.add(values.get(), b.zext(b.icmp_unsigned("!=", found, i64(0)), I64)))
        few = b.icmp_unsigned("<=", values.get(), i64(FEW))
        with b.if_else(few) as (parts, merged):
            with parts:
                self._slots([(c,) for c in digit.counters])
            with merged:
                self._slots([digit.counters[2 * s:2 * s + 2] for s in range(self.nstreams)])
        return few

    def _slots(self, streams: list[tuple[ir.Value, ...]]) -> None:
        """Each stream's counts (the sum of its parts') made its first slot per value,
        stored in its first part's counters."""
        b = self.b
        total = Local(b, I64, i64(0), "total")
        with for_range(b, i64(RADIX), "pre") as v:
            for parts in streams:
                slots = [b.gep(c, [v], source_etype=I64) for c in parts]
                counts = [b.load(slot, typ=I64, align=8) for slot in slots]
                b.store(total.get(), slots[0], align=8)
                total.set(b.add(total.get(), counts[0] if len(counts) == 1 else
                                b.add(counts[0], counts[1])))

    def run(self, counted: ir.Value, shortcut: ir.Value, step: Step) -> None:
        """A pass for every digit of ``counted``, least significant first (see
        :meth:`sort` for ``step``)."""
        b = self.b
        passes = _intrinsic(b, "llvm.ctpop", counted)
        done = Local(b, I64, i64(0), "done")
        with for_range(b, i64(self.digits), "dig") as d, b.if_then(_has(b, counted, d)):
            j = b.add(done.get(), i64(1))
            done.set(j)
            digit = self.digit(d)
            odd = b.trunc(b.sub(passes, j), I1)
            step(digit, b.icmp_signed("==", j, i64(1)), b.icmp_signed("==", j, passes),
                 odd, shortcut)

    def sort(self, varying: ir.Value, step: Step,
             finish: Callable[[ir.Value], ir.Value]) -> None:
        """Sort by the ``varying`` digits (nonzero), through the shortcut when it saves
        passes: ``step(digit, first, last, into_a, shortcut)`` does one pass, ``first``
        and ``last`` (i1) when it is the first/last, ``into_a`` (i1) whether a middle pass
        writes buffer A (else B; the last pass then reads A), ``shortcut`` (i1) whether
        ``finish(budget)`` completes the order afterwards (it returns i1: done, or gave
        up past ``budget`` moves)."""
        b = self.b
        top = self._top(varying, shortcut_digits(b, self.keys, self.n))
        top = b.select(self._crowded(top), varying, top)
        counted = Local(b, I64, top, "counted")
        fn = b.function
        attempt, finishing, again, done = (fn.append_basic_block(f"sort.{s}") for s in (
            "attempt", "finishing", "again", "done"))
        b.branch(attempt)
        b.position_at_end(attempt)
        shortcut = b.icmp_unsigned("!=", counted.get(), varying)
        if self.nstreams == 1:
            self.histogram(counted.get())
        self.run(counted.get(), shortcut, step)
        b.cbranch(shortcut, finishing, done)
        b.position_at_end(finishing)
        budget = b.add(b.ashr(self.n, i64(2)), i64(256))
        b.cbranch(finish(budget), done, again)
        b.position_at_end(again)  # too many keys share the sorted digits: all of them
        counted.set(varying)
        b.branch(attempt)
        b.position_at_end(done)

    def _crowded(self, top: ir.Value) -> ir.Value:
        """i1: a sample of the row says many keys share the digits of ``top``, so the
        shortcut's insertion sort would give up (skewed keys: most of a million Pareto
        integers have the same top digits) and its passes be wasted.

        :data:`SAMPLES` keys at even strides, reduced to those digits, are sorted (in
        ``hist``, free before the passes); :data:`CROWDED` adjacent equal ones mean some
        value of the digits holds about ``CROWDED / SAMPLES`` of the row, far more keys
        than the insertion sort's budget can order. Random keys almost never collide
        there (they share the digits with one key in 16 of the whole row, not of the
        sample). Rows under :data:`SAMPLED` are not sampled: their wasted attempt is
        cheap."""
        b, keys = self.b, self.keys
        crowded = Local(b, I1, ir.Constant(I1, 0), "crowded")
        with b.if_then(b.icmp_signed(">=", self.n, i64(SAMPLED))):
            bits: ir.Value = ir.Constant(keys.ty, 0)
            for d in range(self.digits):
                digit_bits = ir.Constant(keys.ty, ((RADIX - 1) << (d * DIGIT_BITS))
                                         & ((1 << keys.width) - 1))
                bits = b.or_(bits, b.select(_has(b, top, d), digit_bits,
                                            ir.Constant(keys.ty, 0)))
            sample = packed(b, self.hist, I64)
            stride = b.udiv(self.n, i64(SAMPLES))
            with for_range(b, i64(SAMPLES), "sample") as j:
                key = self.key(self.src.load(b, b.mul(j, stride)))
                sample.store(b, j, b.zext(b.and_(key, bits), I64))
            insertion_sort(b, i64(SAMPLES), sample, lambda key: key, [])
            equal = Local(b, I64, i64(0), "equal")
            with for_range(b, i64(SAMPLES - 1), "equal") as j:
                same = b.icmp_unsigned("==", sample.load(b, j), sample.load(b, b.add(j, i64(1))))
                equal.set(b.add(equal.get(), b.zext(same, I64)))
            crowded.set(b.icmp_signed(">=", equal.get(), i64(CROWDED)))
        return crowded.get()

    def _top(self, mask: ir.Value, count: ir.Value) -> ir.Value:
        """The ``count`` most significant digits of ``mask``."""
        b = self.b
        kept, left = Local(b, I64, i64(0), "kept"), Local(b, I64, count, "left")
        for d in reversed(range(self.digits)):
            take = b.and_(_has(b, mask, d), b.icmp_signed(">", left.get(), i64(0)))
            kept.set(b.or_(kept.get(), b.shl(b.zext(take, I64), i64(d))))
            left.set(b.sub(left.get(), b.zext(take, I64)))
        return kept.get()

    def scatter(self, digit: Digit, read: Read, write: Write) -> None:
        """One counting pass: ``read(i)`` gives element i's key and what it carries,
        ``write(pos, carried)`` stores them at their slot."""
        b = self.b

        def mover(counters: tuple[ir.Value, ...]) -> Callable[[ir.Value, int], None]:
            def move(i: ir.Value, stream: int) -> None:
                key, carried = read(i)
                slot = bump(b, counters[stream], digit_of(b, self.keys, key, digit.shift))
                write(slot, carried)
            return move

        if self.nstreams == 1:
            self.streams(mover(digit.counters), 1)
            return
        few = self._count(digit, read)
        with b.if_else(few) as (parts, merged):
            with parts:
                self.streams(mover(digit.counters), 2 * self.nstreams)
            with merged:
                self.streams(mover(digit.counters[::2]), self.nstreams)
