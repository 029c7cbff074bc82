"""The cache report's section on parallel loops (docs/parallel.md): each
loop marked `prange` or by `jit(parallel=True)`, in the primal and in the
gradient, whether it runs in parallel and why (`ad-parallelize`'s analysis,
with the Python names), and for a parallel one how its iterations are cut
into chunks at run time (the minimum work per chunk)."""

from __future__ import annotations

from adpasses.cache.report import ParallelLoop


MARKS = {"prange": "prange", "vmap": "vmap(parallel=True) batch", "zero": "zero-fill of the results"}
"""How a loop's `ad.parallel` mark is named (else "jit(parallel=True)")."""


def parallel_loops(sweep: str, function) -> list[ParallelLoop]:  # type: ignore[no-untyped-def]
    """ParallelLoop per marked loop of `function` (an xDSL func.func in its
    module; not changed)."""
    from xdsl.dialects.builtin import StringAttr

    from adpasses.dialects.ad import PARALLEL_ATTR
    from adpasses.lowering.parallel import block_work
    from adpasses.native.runtime import get_num_threads, get_parallel_min_work
    from adpasses.transforms.parallelize import marked_loops, parallel_report

    loops = marked_loops(function)
    if not loops:
        return []
    found = []
    seen: set[str] = set()
    for loop, (where, problem) in zip(loops, parallel_report(function)):
        # The gradient's reverse loop has its forward loop's location (a
        # loop-local reverse is inside the forward loop: one loop).
        label = "gradient, reverse loop" if sweep == "gradient" and where in seen else sweep
        seen.add(where)
        attr = loop.attributes.get(PARALLEL_ATTR)
        kind = attr.data if isinstance(attr, StringAttr) else ""
        mark = MARKS.get(kind, "jit(parallel=True)")
        if problem is None:
            found.append(ParallelLoop(label, where, mark, True, _chunking(block_work(loop.body.block.ops),
                                                                           get_parallel_min_work(),
                                                                           get_num_threads())
                                      + _tape_layouts(loop)))
        else:
            found.append(ParallelLoop(label, where, mark, False, problem))
    return found


def _tape_layouts(loop) -> str:  # type: ignore[no-untyped-def]
    """The fixed layouts of the tapes `loop` writes or reads
    (transforms/tape_layout.py), as a clause of the report's reason."""
    from xdsl.dialects import memref
    from xdsl.dialects.builtin import IntegerAttr
    from xdsl.ir import OpResult

    from adpasses.core.ir_walk import nested_ops
    from adpasses.transforms.tape_layout import LAYOUT_ATTR

    found: dict[str, tuple[int, bool]] = {}
    for op in nested_ops(loop)[1:]:
        if isinstance(op, (memref.LoadOp, memref.StoreOp)) and isinstance(op.memref, OpResult):
            k = op.memref.op.attributes.get(LAYOUT_ATTR)
            if isinstance(k, IntegerAttr):
                found[op.memref.name_hint or "tape"] = (k.value.data, isinstance(op, memref.StoreOp))
    return "".join(
        f"; tape {name} in a fixed layout: {k} value{'s' if k != 1 else ''} per iteration, iteration q's "
        f"in row q of a (iterations, {k}) buffer, "
        + ("written by this forward loop" if store else "read by this reverse loop (row iterations - 1 - r)")
        + ", each chunk its own rows"
        for name, (k, store) in found.items())


def _chunking(work: int, min_work: int, threads: int) -> str:
    least = -(-min_work // max(1, work))
    return (f"iterations proven independent; up to {threads} threads, in chunks of at least {least} "
            f"iterations (about {max(1, work)} operations each, {min_work} per chunk at least: "
            f"ADPASSES_PARALLEL_MIN_WORK), so fewer than {2 * least} iterations run on the calling thread")
