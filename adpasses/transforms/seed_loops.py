"""Driver functions that call a derivative once per seed, in compiled code.

A Jacobian by reverse sweeps (`adpasses.jacrev` of a function writing an
output array) needs one sweep per output element: a loop of Python calls
would cost a call's overhead per sweep. `add_jacrev_driver` adds to the
module a function that loops over the output's elements itself. Per
element `idx` of the output `out` it

  1. restores every array f writes from its pristine copy (the gradient
     re-runs f, and each sweep must start from the caller's contents),
  2. zeroes every shadow and stores 1.0 at `shadow(out)[idx]`,
  3. calls the gradient (float results are seeded with 0.0: only `out`
     is differentiated),
  4. copies the derivative of each differentiated argument into its
     Jacobian: the shadow into `jac_k[idx, ...]` (a subview), or the
     returned derivative of a float into `jac_k[idx]`.

Driver parameters: the gradient's parameters without its seeds (values,
each followed by its shadow), then one pristine copy per written array,
then one Jacobian per differentiated argument (shape `out.shape +
arg.shape`, the argument's element type, C-contiguous).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from adpasses.dialects.ad import WORKSPACE_ATTR

SHADOWED = ("dup", "dupnoneed")


def _index(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def _dims(b: Builder, m: SSAValue) -> list[SSAValue]:
    rank = len(m.type.get_shape())  # type: ignore[attr-defined]
    return [b.insert(memref.DimOp(m, _index(b, d))).result for d in range(rank)]


def for_each_index(b: Builder, sizes: Sequence[SSAValue],
                   body: Callable[[Builder, list[SSAValue]], None]) -> None:
    """A nest of scf.for over `sizes` (row-major); `body(builder, indices)`
    fills the innermost loop."""
    if not sizes:
        body(b, [])
        return
    zero, one = _index(b, 0), _index(b, 1)

    def nest(outer: Builder, level: int, ivs: list[SSAValue]) -> None:
        block = Block(arg_types=[IndexType()])
        loop = outer.insert(scf.ForOp(zero, sizes[level], one, [], Region(block)))
        inner = Builder(InsertPoint.at_end(block))
        here = ivs + [loop.body.block.args[0]]
        if level + 1 < len(sizes):
            nest(inner, level + 1, here)
        else:
            body(inner, here)
        inner.insert(scf.YieldOp())

    nest(b, 0, [])


def fill(b: Builder, m: SSAValue, value: float) -> None:
    element = m.type.element_type  # type: ignore[attr-defined]
    c = b.insert(arith.ConstantOp(FloatAttr(value, element))).result

    def store(inner: Builder, ivs: list[SSAValue]) -> None:
        inner.insert(memref.StoreOp.get(c, m, ivs))

    for_each_index(b, _dims(b, m), store)


def _row_view(b: Builder, jac: SSAValue, idx: list[SSAValue], sizes: list[SSAValue]) -> SSAValue:
    """jac[idx..., :, ..., :] as a rank-reduced strided view."""
    rank = len(idx) + len(sizes)
    one = _index(b, 1)
    zero = _index(b, 0)
    element = jac.type.element_type  # type: ignore[attr-defined]
    layout = StridedLayoutAttr([NoneAttr()] * len(sizes), NoneAttr())
    result = MemRefType(element, [DYNAMIC_INDEX] * len(sizes), layout)
    static_sizes = [1] * len(idx) + [DYNAMIC_INDEX] * len(sizes)
    op = memref.SubviewOp(jac, idx + [zero] * len(sizes), sizes, [one] * rank,
                          [DYNAMIC_INDEX] * rank, static_sizes, [DYNAMIC_INDEX] * rank, result)
    return b.insert(op).results[0]


def add_jacrev_driver(module: ModuleOp, gradient: func.FuncOp, activity: Sequence[str],
                      ret_activity: Sequence[str], out: int, written: Sequence[int],
                      argnums: Sequence[int], name: str) -> func.FuncOp:
    """Add `@name`, the loop over the elements of argument `out` described
    in the module docstring, calling `gradient` (built for `activity`,
    `ret_activity`, without the primal)."""
    grad_inputs = list(gradient.function_type.inputs.data)
    n_seeds = list(ret_activity).count("active")
    value_types: list[Attribute] = grad_inputs[:len(grad_inputs) - n_seeds]
    # Positions of each argument's value and shadow among the parameters.
    value_at, shadow_at, p = [], {}, 0
    for k, act in enumerate(activity):
        value_at.append(p)
        p += 1
        if act in SHADOWED:
            shadow_at[k] = p
            p += 1
    jac_types = []
    for k in argnums:
        t = value_types[value_at[k]]
        out_shape = value_types[value_at[out]].get_shape()  # type: ignore[attr-defined]
        element = t.element_type if isinstance(t, MemRefType) else t
        rank = len(out_shape) + (len(t.get_shape()) if isinstance(t, MemRefType) else 0)
        jac_types.append(MemRefType(element, [DYNAMIC_INDEX] * rank))
    pristine_types = [value_types[value_at[w]] for w in written]
    driver = func.FuncOp(name, (value_types + pristine_types + jac_types, []))
    args = list(driver.body.block.args)
    params, pristine, jacs = (args[:len(value_types)], args[len(value_types):len(value_types) + len(written)],
                              args[len(value_types) + len(written):])
    b = Builder(InsertPoint.at_end(driver.body.block))
    out_value = params[value_at[out]]
    out_shadow = params[shadow_at[out]]
    shadows = [params[i] for i in shadow_at.values()]
    # Sizes read once, outside the loop.
    arg_sizes = {k: _dims(b, params[shadow_at[k]]) for k in argnums if k in shadow_at}
    returned = [k for k, act in enumerate(activity) if act == "active"]
    seed_zero = [b.insert(arith.ConstantOp(FloatAttr(0.0, t))).result
                 for t in grad_inputs[len(grad_inputs) - n_seeds:]]

    def sweep(inner: Builder, idx: list[SSAValue]) -> None:
        for w, copy in zip(written, pristine):
            inner.insert(memref.CopyOp(copy, params[value_at[w]]))
        for s in shadows:
            fill(inner, s, 0.0)
        one = inner.insert(arith.ConstantOp(FloatAttr(1.0, out_shadow.type.element_type))).result  # type: ignore[attr-defined]
        inner.insert(memref.StoreOp.get(one, out_shadow, idx))
        call = inner.insert(func.CallOp(gradient.sym_name.data, params + seed_zero,
                                        list(gradient.function_type.outputs.data)))
        derivative = dict(zip(returned, call.results))
        for k, jac in zip(argnums, jacs):
            if k in shadow_at:
                view = _row_view(inner, jac, idx, arg_sizes[k])
                inner.insert(memref.CopyOp(params[shadow_at[k]], view))
            else:
                inner.insert(memref.StoreOp.get(derivative[k], jac, idx))

    for_each_index(b, _dims(b, out_value), sweep)
    b.insert(func.ReturnOp())
    module.body.block.add_op(driver)
    return driver


# -- forward sweeps: Jacobians and Hessians by tangents, `width` lanes per sweep --------


@dataclass(frozen=True)
class ForwardSweeps:
    """Which parameters and results of a tangent function (the output of
    `forward_differentiate`, `width` lanes) a forward driver allocates,
    seeds, restores and reads. Positions index the tangent function's
    parameters, or its results for `measured_results`.

    The driver allocates every parameter in `scratch` (lanes and shadows;
    `scratch_shape[i]` is the parameter whose sizes it takes) and loops
    over the elements `j` of each direction (an array argument whose lanes
    are seeded with unit vectors), `width` at a time: before each sweep it
    restores `restore` from pristine copies and zeroes the scratch (but
    `seed_only`), stores
    1.0 at element `j0 + l` of lane `l` of the direction; after it, copies
    lane `l` of each measured array into column `j0 + l` of its output
    (shape measured.shape + direction.shape), and lane `l` of each
    measured float result into element `j0 + l` (direction.shape).
    Elements are counted row-major: the driver indexes 1-D views of its
    scratch and of the outputs, which must be C-contiguous."""


    scratch: tuple[int, ...]                 # memref params the driver allocates (lanes, shadows)
    scratch_shape: tuple[int, ...]           # per scratch param: the param whose sizes it has
    restore: tuple[int, ...]                 # memref params restored from pristine copies
    directions: tuple[tuple[int, ...], ...]  # per direction: its lanes (scratch params)
    measured_arrays: tuple[tuple[int, ...], ...]   # per measured array: its lanes (scratch params)
    measured_results: tuple[tuple[int, ...], ...]  # per measured float: its lanes (results)
    constants: tuple[tuple[int, float], ...] = ()  # float params fixed in the driver (a seed)
    out_ranks: tuple[int, ...] = ()          # per output (per measured, per direction): its rank
    seed_only: tuple[int, ...] = ()
    """Scratch lanes the tangent function only reads (directions of arrays f
    never writes): zeroed once, and after each sweep only where it was
    seeded, rather than whole before every sweep."""

    def driver_inputs(self, n_params: int) -> list[int]:
        """The tangent function's parameters the driver takes from its
        caller, in order (then one pristine copy per `restore`, then the
        outputs: per measured, per direction)."""
        inner = set(self.scratch) | {k for k, _ in self.constants}
        return [k for k in range(n_params) if k not in inner]


def _flat_view(b: Builder, m: SSAValue) -> SSAValue:
    """A 1-D view of a C-contiguous (freshly allocated) memref."""
    sizes = _dims(b, m)
    n = _index(b, 1)
    for s in sizes:
        n = b.insert(arith.MuliOp(n, s)).result
    element = m.type.element_type  # type: ignore[attr-defined]
    op = memref.ReinterpretCastOp.from_dynamic(m, [0], [n], [1], MemRefType(element, [DYNAMIC_INDEX]))
    return b.insert(op).results[0]


def add_forward_driver(module: ModuleOp, tangent: func.FuncOp, sweeps: ForwardSweeps, name: str,
                       scratch_from_caller: bool = False) -> func.FuncOp:
    """Add `@name`, the loop of forward sweeps described by `sweeps`,
    calling `tangent`. Parameters: `sweeps.driver_inputs(...)` of the
    tangent function's parameters, the pristine copies, the outputs, and
    with `scratch_from_caller` one buffer per `sweeps.scratch` (C-contiguous,
    the sizes of its `scratch_shape` parameter; any contents): a caller
    that calls the driver many times (vmap's batch loop) allocates them
    once, rather than the driver taking workspaces on every call."""
    inputs = list(tangent.function_type.inputs.data)
    result_types = list(tangent.function_type.outputs.data)
    fixed = dict(sweeps.constants)
    taken = sweeps.driver_inputs(len(inputs))

    def element(t: Attribute) -> Attribute:
        return t.element_type if isinstance(t, MemRefType) else t

    measured = ([element(inputs[lanes[0]]) for lanes in sweeps.measured_arrays]
                + [result_types[lanes[0]] for lanes in sweeps.measured_results])
    out_types: list[Attribute] = []
    ranks = iter(sweeps.out_ranks)
    for el in measured:
        out_types += [MemRefType(el, [DYNAMIC_INDEX] * next(ranks)) for _ in sweeps.directions]
    def own_type(k: int) -> MemRefType:
        t = inputs[k]
        return MemRefType(t.element_type, [DYNAMIC_INDEX] * len(t.get_shape()))  # type: ignore[attr-defined]

    scratch_types = [own_type(k) for k in sweeps.scratch] if scratch_from_caller else []
    driver = func.FuncOp(name, ([inputs[k] for k in taken] + [inputs[k] for k in sweeps.restore] + out_types
                                + scratch_types, []))
    args = iter(driver.body.block.args)
    param: dict[int, SSAValue] = {k: next(args) for k in taken}
    pristine = {k: next(args) for k in sweeps.restore}
    outs = [[next(args) for _ in sweeps.directions] for _ in measured]
    given = list(args)
    b = Builder(InsertPoint.at_end(driver.body.block))
    outs = [[_flat_view(b, o) for o in row] for row in outs]
    for k, v in fixed.items():
        param[k] = b.insert(arith.ConstantOp(FloatAttr(v, inputs[k]))).result
    flat: dict[int, SSAValue] = {}
    buffers = []
    for i, (k, like) in enumerate(zip(sweeps.scratch, sweeps.scratch_shape)):
        t, own = inputs[k], own_type(k)
        if scratch_from_caller:
            buf = given[i]
        else:
            # A workspace: the JIT keeps the buffer across calls (no allocation
            # per call once it is large enough).
            alloc = memref.AllocOp(_dims(b, param[like]), [], own)
            alloc.attributes[WORKSPACE_ATTR] = UnitAttr()
            buf = b.insert(alloc).results[0]
            buffers.append(buf)
        flat[k] = _flat_view(b, buf)
        param[k] = buf if own == t else b.insert(memref.CastOp.get(buf, t)).results[0]
    seed_only = set(sweeps.seed_only)
    for k in sweeps.seed_only:
        fill(b, flat[k], 0.0)
    zero, one = _index(b, 0), _index(b, 1)
    measured_sizes = [_dims(b, flat[lanes[0]])[0] for lanes in sweeps.measured_arrays]
    width = len(sweeps.directions[0]) if sweeps.directions else 1
    step = _index(b, width)

    def when(bb: Builder, cond: SSAValue, body: Callable[[Builder], None]) -> None:
        then = Block()
        tb = Builder(InsertPoint.at_end(then))
        body(tb)
        tb.insert(scf.YieldOp())
        bb.insert(scf.IfOp(cond, [], Region(then), Region(Block([scf.YieldOp()]))))

    for d, lanes in enumerate(sweeps.directions):
        n_d = _dims(b, flat[lanes[0]])[0]
        block = Block(arg_types=[IndexType()])
        b.insert(scf.ForOp(zero, n_d, step, [], Region(block)))
        j0 = block.args[0]
        inner = Builder(InsertPoint.at_end(block))
        for k in sweeps.restore:
            inner.insert(memref.CopyOp(pristine[k], param[k]))
        for k in sweeps.scratch:
            if k not in seed_only:
                fill(inner, flat[k], 0.0)
        column = []
        for lane in range(width):
            j = inner.insert(arith.AddiOp(j0, _index(inner, lane))).result
            column.append((j, inner.insert(arith.CmpiOp(j, n_d, "slt")).result))
        for (j, ok), k in zip(column, lanes):
            c1 = inner.insert(arith.ConstantOp(FloatAttr(1.0, flat[k].type.element_type))).result  # type: ignore[attr-defined]
            when(inner, ok, lambda tb, j=j, k=k, c1=c1: tb.insert(memref.StoreOp.get(c1, flat[k], [j])))
        call = inner.insert(func.CallOp(tangent.sym_name.data, [param[k] for k in range(len(inputs))],
                                        result_types))
        for m, m_lanes in enumerate(sweeps.measured_arrays):
            for (j, ok), k in zip(column, m_lanes):
                def copy_column(tb: Builder, j: SSAValue = j, k: int = k, target: SSAValue = outs[m][d],
                                n_m: SSAValue = measured_sizes[m], n_d: SSAValue = n_d) -> None:
                    def store(lb: Builder, ivs: list[SSAValue]) -> None:
                        v = lb.insert(memref.LoadOp.get(flat[k], ivs)).res
                        row = lb.insert(arith.MuliOp(ivs[0], n_d)).result
                        at = lb.insert(arith.AddiOp(row, j)).result
                        lb.insert(memref.StoreOp.get(v, target, [at]))
                    for_each_index(tb, [n_m], store)
                when(inner, ok, copy_column)
        for (j, ok), k in zip(column, lanes):
            if k in seed_only:
                c0 = inner.insert(arith.ConstantOp(FloatAttr(0.0, flat[k].type.element_type))).result  # type: ignore[attr-defined]
                when(inner, ok, lambda tb, j=j, k=k, c0=c0: tb.insert(memref.StoreOp.get(c0, flat[k], [j])))
        base = len(sweeps.measured_arrays)
        for r, r_lanes in enumerate(sweeps.measured_results):
            for (j, ok), k in zip(column, r_lanes):
                v, target = call.results[k], outs[base + r][d]
                when(inner, ok, lambda tb, j=j, v=v, target=target: tb.insert(memref.StoreOp.get(v, target, [j])))
        inner.insert(scf.YieldOp())
    for buf in buffers:
        dealloc = memref.DeallocOp.get(buf)
        dealloc.attributes[WORKSPACE_ATTR] = UnitAttr()
        b.insert(dealloc)
    b.insert(func.ReturnOp())
    module.body.block.add_op(driver)
    return driver
