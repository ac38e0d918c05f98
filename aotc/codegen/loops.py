"""Counted loops and loop nests with i64 induction variables.

Loops are emitted in the plain ``for (i = 0; i < n; i++)`` shape; LLVM's loop rotation
turns them into the do-while form its vectorizer wants. A nest is loops in order, the
last one innermost, which is the unit-stride axis of a C-contiguous output.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager

from llvmlite import ir

from .dtypes import I64, i64


@contextmanager
def for_range(b: ir.IRBuilder, count: ir.Value, name: str = "i") -> Iterator[ir.Value]:
    """Emit ``for i in range(count)`` around the body of the ``with`` block.

    The body may add blocks of its own (branches, inner loops); the back edge comes from
    wherever the builder is when the body ends, and code after the ``with`` continues
    in the exit block.
    """
    fn = b.function
    pre = b.block
    head = fn.append_basic_block(f"{name}.head")
    body = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    b.branch(head)
    b.position_at_end(head)
    index = b.phi(I64, name=name)
    index.add_incoming(i64(0), pre)
    b.cbranch(b.icmp_signed("<", index, count), body, done)
    b.position_at_end(body)
    yield index
    step = b.add(index, i64(1), flags=("nuw", "nsw"))
    index.add_incoming(step, b.block)
    b.branch(head)
    b.position_at_end(done)


@contextmanager
def loop_nest(b: ir.IRBuilder, dims: Sequence[ir.Value], name: str = "i"
              ) -> Iterator[list[ir.Value]]:
    """Nested loops over ``dims`` (outermost first); yields the index of each axis."""
    with ExitStack() as stack:
        yield [stack.enter_context(for_range(b, d, f"{name}{k}")) for k, d in enumerate(dims)]
