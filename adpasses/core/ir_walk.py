"""Walking nested IR without nested generators.

xDSL's `Operation.walk()` is a chain of `yield from` generators, one per
level of nesting: each op it yields passes through every level above it,
so walking a nest of d regions costs O(ops x d), and passes that walk each
loop of a nest cost O(d^3) (300 nested loops took minutes). `nested_ops`
is the same pre-order with an explicit stack.
"""

from __future__ import annotations

from xdsl.ir import Operation


def nested_ops(op: Operation) -> list[Operation]:
    """`list(op.walk())`: `op`, then every op nested in it, in pre-order."""
    out: list[Operation] = []
    stack = [op]
    while stack:
        current = stack.pop()
        out.append(current)
        children = [inner for region in current.regions for block in region.blocks
                    for inner in block.ops]
        stack.extend(reversed(children))
    return out
