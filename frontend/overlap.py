"""A run-time overlap test before an in-place update whose source may be
the target's memory (docs/frontend.md, "In place").

numpy computes `a += e(b)` as if `e(b)` were computed first: where `b`
shares memory with `a` through another view (`f(x, x)` with
`a += b[::-1]`, `A += B.T`), the elements the update writes first must not
be read afterwards. When the compiler knows where the memory comes from it
decides at compile time: a local array never overlaps another array
(nothing to do), a view of the target's own array is copied first
(`x += x[::-1]`: `update_in_place`). What it cannot know is whether two
arguments (or an argument and an array a callee returned) are the same
memory: that is decided per call. A copy for every such pair would give
each `out += e(x)` a temporary; instead the update tests the byte ranges
(`ad.overlaps`, a few integer operations per statement, none per element)
and copies the sources that overlap only when they do:

    %o = ad.overlaps %a, %b
    scf.if %o {  copy %b; the update reading the copy; free it  }
    else      {  the update reading %b  }

Where the arguments are known distinct (`ad.noalias`, the version compiled
for arrays that share no memory), `ad-fold-overlap-checks` folds the test
to `false` and the branch away: no test, no temporary.

The target itself may have elements that share memory: a writable
`as_strided` view with a stride of 0 (numpy's `y += 1.0` then reads every
element as it was before the statement: one write of `old + 1`, not five
accumulated). An argument whose layout is not C-contiguous is tested too
(`ad.self_overlaps`) and, when it holds, the update reads a copy of the
target (`copies[target]`) instead of the elements it writes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import Block, SSAValue

from adpasses.analysis.memref_views import is_allocation
from adpasses.dialects.ad import OverlapsOp, SelfOverlapsOp
from adpasses.frontend.values import Array


class OverlapMixin:
    def overlap_unknown(self, source: SSAValue, target: SSAValue) -> bool:
        """Whether `source` may address `target`'s memory and only the run
        time can tell: their memory roots differ and neither is a local
        array (two arguments, `f(x, x)`; a callee's result)."""
        a, b = self.memory_root(source), self.memory_root(target)  # type: ignore[attr-defined]
        return a is not b and not (is_allocation(a) or is_allocation(b))

    def may_overlap_itself(self, target: SSAValue) -> bool:
        """Whether elements of `target` may share memory: its memory is an
        argument's (or a callee's result) not laid out C-contiguously (the
        API passes such arrays as strided memrefs; a local array and a
        contiguous argument have distinct elements, and so do views of
        them made by slicing)."""
        root = self.memory_root(target)  # type: ignore[attr-defined]
        t = root.type
        return not is_allocation(root) and isinstance(t, MemRefType) and not isinstance(t.layout, NoneAttr)

    def overlap_guarded(self, target: SSAValue, sources: list[SSAValue],
                        update: Callable[[dict[SSAValue, SSAValue]], None], node: ast.AST,
                        itself: bool = False) -> None:
        """`update(replacements)` emits the update reading each source
        through `replacements` (a source -> a copy of it). With `sources`
        that may overlap `target` at run time, it is emitted twice: reading
        copies of them when some overlaps (`ad.overlaps`), reading them
        where none does. `itself`: also when two elements of `target`
        share memory (`ad.self_overlaps`); then `replacements[target]` is a
        copy of the target, to read its elements from."""
        unique = list(dict.fromkeys(m for m in sources if m is not target))
        if not unique and not itself:
            update({})
            return
        with self.at(node):  # type: ignore[attr-defined]
            tests = [self.emit(OverlapsOp(target, m)).results[0] for m in unique]  # type: ignore[attr-defined]
            if itself:
                unique.append(target)
                tests.append(self.emit(SelfOverlapsOp(target)).results[0])  # type: ignore[attr-defined]
            cond = tests[0]
            for t in tests[1:]:
                cond = self.emit(arith.OrIOp(cond, t)).results[0]  # type: ignore[attr-defined]
            copied, direct = Block(), Block()
            with self.inserting_at_end(copied):  # type: ignore[attr-defined]
                with self.allocation_scope():  # type: ignore[attr-defined]
                    copies = {m: self.materialize(Array(m), node, copy=True).value  # type: ignore[attr-defined]
                              for m in unique}
                    update(copies)
                self.emit(scf.YieldOp())  # type: ignore[attr-defined]
            with self.inserting_at_end(direct):  # type: ignore[attr-defined]
                update({})
                self.emit(scf.YieldOp())  # type: ignore[attr-defined]
            self.emit(scf.IfOp(cond, [], [copied], [direct]))  # type: ignore[attr-defined]


__all__ = ["OverlapMixin"]
