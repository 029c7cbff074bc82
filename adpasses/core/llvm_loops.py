"""A counted loop in llvmlite IR: `for t in range(start, stop)`, with values
carried from one iteration to the next.

The lowering (the runtime's serial fallback, the parallel loop's chunk
bookkeeping) and the native dispatch builtins (the argument scans) all
emit this loop; it lives here, below both, so that there is one copy of
the block layout and of the phi bookkeeping. Imports only llvmlite.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

from llvmlite import ir

_I64 = ir.IntType(64)


class counted_loop:  # noqa: N801 - used like a statement: `with counted_loop(...) as loop:`
    """`with counted_loop(b, stop, "name") as loop:` emits, at the builder's
    position, blocks `name.head` (the test `t < stop`, signed), `name.body`
    (what the `with` block emits) and `name.done`, where the builder is left.

    `loop.index` is `t` (i64, from `start`, default 0, by 1). `carried`:
    initial values of loop-carried values; `loop.carried` are their phis in
    the body, and after the loop their final values. Inside the body, call
    `loop.next(values)` once with the values for the next iteration (not
    needed when nothing is carried)."""

    def __init__(self, b: ir.IRBuilder, stop: ir.Value, label: str,
                 start: ir.Value | None = None, carried: Sequence[ir.Value] = ()) -> None:
        self.b, self.stop, self.label = b, stop, label
        self.start = ir.Constant(_I64, 0) if start is None else start
        self._initial = list(carried)
        self._next: list[ir.Value] | None = None

    def __enter__(self) -> counted_loop:
        b = self.b
        fn = b.function
        self.head = fn.append_basic_block(f"{self.label}.head")
        body = fn.append_basic_block(f"{self.label}.body")
        self.done = fn.append_basic_block(f"{self.label}.done")
        pre = b.block
        b.branch(self.head)
        b.position_at_end(self.head)
        self.index = b.phi(_I64)
        self.index.add_incoming(self.start, pre)
        self.carried: list[ir.PhiInstr] = []
        for v in self._initial:
            p = b.phi(v.type)
            p.add_incoming(v, pre)
            self.carried.append(p)
        b.cbranch(b.icmp_signed("<", self.index, self.stop), body, self.done)
        b.position_at_end(body)
        return self

    def next(self, values: Sequence[ir.Value]) -> None:
        """The carried values for the next iteration (one per `carried`)."""
        if len(values) != len(self.carried):
            raise ValueError(f"counted_loop {self.label!r}: {len(values)} next values for "
                             f"{len(self.carried)} carried")
        self._next = list(values)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            return  # the IR is abandoned with the exception
        if self.carried and self._next is None:
            raise ValueError(f"counted_loop {self.label!r}: carried values but no next()")
        b = self.b
        latch = b.block
        self.index.add_incoming(b.add(self.index, ir.Constant(_I64, 1)), latch)
        for p, v in zip(self.carried, self._next or ()):
            p.add_incoming(v, latch)
        b.branch(self.head)
        b.position_at_end(self.done)
