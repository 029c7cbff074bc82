"""Taped values that can share one tape: those of exclusive branches.

A value taped in one region of an op that runs exactly one of its regions
(`Runs.ONE_OF`: scf.if, scf.index_switch) and a value of the same type
taped in another region of that op are never both pushed in one call when
the op itself runs at most once per call (no loop around it): one buffer
holds either, sized for the larger. `ad-lower-linalg`'s reduction over a
leading axis chooses its loop order at run time that way (`scf.if` on the
strides), and its two orders tape the same exponentials: with a tape each,
a call allocated both (the column-wise log-sum-exp taped 17 bytes per
element where 9 are pushed).

The reverse builder (`reverse/gradient.py`) gives each group one tape; the
cache report counts a group's bytes once, as its largest member's. A value
pushed inside a loop marked parallel keeps a tape of its own: a fixed
layout (transforms/tape_layout.py) needs every push of a tape in one loop.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from adpasses.core.ir_facts import home_block
from adpasses.core.region_flow import Runs, region_flow, runs_at_most_once
from adpasses.dialects.ad import PARALLEL_ATTR


def _regions_above(value: SSAValue, top: Operation) -> dict[Operation, int]:
    """Each region op around `value` (below `top`) and the index of its region
    that holds `value`, innermost first."""
    out: dict[Operation, int] = {}
    block = home_block(value)
    while True:
        region = block.parent
        op = block.parent_op()
        if op is None or op is top or region is None:
            return out
        out[op] = list(op.regions).index(region)
        up = op.parent_block()
        if up is None:
            return out
        block = up


def _runs_at_most_once_per_call(op: Operation, top: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and parent is not top:
        if not runs_at_most_once(parent):
            return False
        parent = parent.parent_op()
    return True


def _in_parallel_loop(value: SSAValue, top: Operation) -> bool:
    return any(PARALLEL_ATTR in op.attributes for op in _regions_above(value, top))


def exclusive(a: SSAValue, b: SSAValue, top: Operation) -> bool:
    """`a` and `b` lie in different regions of an op that runs one of its
    regions, at most once per call of `top` (the function)."""
    above_b = _regions_above(b, top)
    for op, region in _regions_above(a, top).items():
        if op in above_b:  # the innermost op around both
            flow = region_flow(op)
            return (flow is not None and flow.runs is Runs.ONE_OF and above_b[op] != region
                    and _runs_at_most_once_per_call(op, top))
    return False


def shared_tape_groups(values: Sequence[SSAValue], top: Operation) -> list[list[SSAValue]]:
    """`values` (in order) in groups that may share one tape: same type,
    pairwise exclusive, none in a loop marked parallel; a value that shares
    with none is a group of one."""
    groups: list[list[SSAValue]] = []
    for v in values:
        if _in_parallel_loop(v, top):
            groups.append([v])
            continue
        for group in groups:
            if group[0].type == v.type and not _in_parallel_loop(group[0], top) \
                    and all(exclusive(v, w, top) for w in group):
                group.append(v)
                break
        else:
            groups.append([v])
    return groups


__all__ = ["exclusive", "shared_tape_groups"]
