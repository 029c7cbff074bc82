"""Which load reads back what a store wrote (store-to-load forwarding).

`load_reading_back(store)` finds a load that, at every execution of
`store`, reads the element it wrote before anything else writes that
element: the cache planner then tapes the value once, at the load, and
gives the store's value from it (`adpasses.cache.planner`, decision
`shared`; docs/cache.md, "Tape once").

The shape recognised (the MLP's `h[j] = tanh(t)` ... `o += h[j] * W2[j]`,
the dense layer's `y[r, c] = tanh(...)` ... `s += y[r, c] * y0[r, c]`): in
one block P, an op A_S holding the store and a later op A_L holding the
load, each a nest of `scf.for` loops (nothing else between P and the
access) of the same depth, with bounds that compute the same values, and
indices that are the same expressions of the corresponding induction
variables, in which every induction variable of the store's nest appears
as an index (so distinct iterations write distinct elements). Then the
load at iteration x reads the element the store wrote at iteration x of
the same execution of P, provided no other write reaches that element in
between: writes in A_S that index with the induction variables of every
loop they share with the store and come before the store's subtree in
the innermost of those loops (earlier rows, as the dense layer's
`y[r, c] = b[r]`), and no write that may touch the memory between A_S and
A_L or inside A_L.
"""

from __future__ import annotations

from xdsl.dialects import memref, scf
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from adpasses.analysis.alias import AliasAnalysis, AliasKind
from adpasses.analysis.memory_writes import Extent
from adpasses.core.effects import is_pure
from adpasses.core.ir_facts import home_block, is_constant


def load_reading_back(store: memref.StoreOp, alias: AliasAnalysis,
                      top: Block) -> memref.LoadOp | None:
    """A load of `store.memref` that reads back, at each execution of
    `store`, the value it stored (see the module docstring), with indices
    available anywhere in the reverse sweep (induction variables of its
    nest, constants, values of the function's top block `top`); None if
    none is proven."""
    mem = store.memref
    if home_block(mem) is not top:
        return None
    for use in mem.uses:
        load = use.operation
        if isinstance(load, memref.LoadOp) and load.memref is mem and _reads_back(store, load, alias, top):
            return load
    return None


def _reads_back(store: memref.StoreOp, load: memref.LoadOp, alias: AliasAnalysis, top: Block) -> bool:
    block = _common_block(store, load)
    if block is None:
        return False
    a_s, a_l = _ancestor_in(store, block), _ancestor_in(load, block)
    if a_s is a_l or not a_s.is_before_in_block(a_l):
        return False
    nest_s, nest_l = _for_nest(store, a_s), _for_nest(load, a_l)
    if nest_s is None or nest_l is None or len(nest_s) != len(nest_l):
        return False
    ivs: dict[SSAValue, SSAValue] = {}
    for fs, fl in zip(nest_s, nest_l):
        if not all(_same(a, b, ivs) for a, b in ((fs.lb, fl.lb), (fs.ub, fl.ub), (fs.step, fl.step))):
            return False
        ivs[fs.body.block.args[0]] = fl.body.block.args[0]
    indices_s, indices_l = list(store.indices), list(load.indices)
    if len(indices_s) != len(indices_l) or not all(_same(a, b, ivs) for a, b in zip(indices_s, indices_l)):
        return False
    position = _iv_positions(indices_s, nest_s)
    if position is None:
        return False  # an iteration of the nest may write an element another one writes
    if not all(_available(v, top, nest_s) for v in indices_s) or not all(
            _available(v, top, nest_l) for v in indices_l):
        return False
    return (_earlier_writes_only(store, nest_s, position, alias)
            and not _writes_between(a_s, a_l, mem=store.memref, alias=alias)
            and not _writes_inside(a_l, store.memref, alias))


def _common_block(a: Operation, b: Operation) -> Block | None:
    blocks_a = []
    op: Operation | None = a
    while op is not None:
        blk = op.parent_block()
        if blk is None:
            break
        blocks_a.append(blk)
        op = blk.parent_op()
    op = b
    while op is not None:
        blk = op.parent_block()
        if blk is None:
            return None
        if blk in blocks_a:
            return blk
        op = blk.parent_op()
    return None


def _ancestor_in(op: Operation, block: Block) -> Operation:
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _for_nest(access: Operation, top_op: Operation) -> list[scf.ForOp] | None:
    """The scf.for loops from `top_op` down to `access` (outermost first),
    if each sits directly in the body of the one above and `access` directly
    in the innermost (so it runs in every iteration); [] if `access` is
    `top_op`."""
    nest: list[scf.ForOp] = []
    op = access
    while op is not top_op:
        parent = op.parent_op()
        if not isinstance(parent, scf.ForOp) or op.parent_block() is not parent.body.block:
            return None
        nest.append(parent)
        op = parent
    return list(reversed(nest))


def _same(a: SSAValue, b: SSAValue, ivs: dict[SSAValue, SSAValue]) -> bool:
    """`a` (in the store's nest) and `b` (in the load's) compute the same
    value: the same SSA value, corresponding induction variables, or the
    same pure op over such operands."""
    if a is b or ivs.get(a) is b:
        return True
    if not (isinstance(a, OpResult) and isinstance(b, OpResult)) or a.index != b.index:
        return False
    oa, ob = a.op, b.op
    if (type(oa) is not type(ob) or oa.regions or ob.regions or not is_pure(oa)
            or oa.properties != ob.properties or len(oa.operands) != len(ob.operands)):
        return False
    if is_constant(a):
        return oa.attributes.get("value") == ob.attributes.get("value")
    return all(_same(x, y, ivs) for x, y in zip(oa.operands, ob.operands))


def _iv_positions(indices: list[SSAValue], nest: list[scf.ForOp]) -> list[int] | None:
    """Per loop of the nest, the position of the index that is its
    induction variable; None if one is not an index."""
    positions = []
    for loop in nest:
        iv = loop.body.block.args[0]
        found = [p for p, v in enumerate(indices) if v is iv]
        if not found:
            return None
        positions.append(found[0])
    return positions


def _available(value: SSAValue, top: Block, nest: list[scf.ForOp]) -> bool:
    """Known in the reverse of the access's block without a cache decision
    of its own: a constant, a value of the top block, an iv of the nest."""
    if is_constant(value) or home_block(value) is top:
        return True
    return isinstance(value, BlockArgument) and any(value is f.body.block.args[0] for f in nest)


def _targets_touching(op: Operation, mem: SSAValue, alias: AliasAnalysis) -> list:
    touching = []
    for target in alias._targets.get(op, []):
        if target.extent is Extent.OUTSIDE or target.memref is None:
            if alias._reachable_from_outside(alias.underlying(mem)):
                touching.append(target)
            continue
        if alias.alias(target.memref, mem).kind is not AliasKind.NO_ALIAS:
            touching.append(target)
    return touching


def _earlier_writes_only(store: memref.StoreOp, nest: list[scf.ForOp], position: list[int],
                         alias: AliasAnalysis) -> bool:
    """Every write in the store's nest that may touch its memory writes it
    (directly, one element) with the induction variables of all the loops
    it shares with the store at the store's positions, before the store's
    subtree of the innermost loop they share: it never writes the stored
    element after the store within the nest."""
    if not nest:
        return True
    for write in nest[0].walk():
        if write is store:
            continue
        touching = _targets_touching(write, store.memref, alias)
        if not touching:
            continue
        shared = [k for k, loop in enumerate(nest) if loop.is_ancestor(write)]
        if not shared:
            return False
        inner = nest[shared[-1]].body.block
        if not _ancestor_in(write, inner).is_before_in_block(_ancestor_in(store, inner)):
            return False
        for target in touching:
            if target.extent is not Extent.ELEMENT or target.memref is not store.memref:
                return False
            if any(target.indices[position[k]] is not nest[k].body.block.args[0] for k in shared):
                return False
    return True


def _writes_between(first: Operation, last: Operation, mem: SSAValue, alias: AliasAnalysis) -> bool:
    op = first.next_op
    while op is not None and op is not last:
        if _writes_inside(op, mem, alias):
            return True
        op = op.next_op
    return False


def _writes_inside(op: Operation, mem: SSAValue, alias: AliasAnalysis) -> bool:
    return any(_targets_touching(inner, mem, alias) for inner in op.walk())
