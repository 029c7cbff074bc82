"""Driver functions that call a derivative once per seed, in compiled code.

A Jacobian by reverse sweeps (`adpasses.jacrev` of a function writing an
output array) needs one sweep per output element: a loop of Python calls
would cost a call's overhead per sweep. `add_jacrev_driver` adds to the
module a function that loops over the output's elements itself, `width`
of them per call of a gradient of that width (vector reverse mode: one
forward sweep, `width` cotangents). Per chunk of elements `j0 .. j0 +
width - 1` of the output `out` (row-major) it

  1. restores every array f writes from its pristine copy (the gradient
     re-runs f, and each sweep must start from the caller's contents),
  2. zeroes every shadow lane and stores 1.0 at element `j0 + l` of lane
     `l` of `shadow(out)`,
  3. calls the gradient (float results are seeded with 0.0: only `out`
     is differentiated),
  4. copies the derivative of each differentiated argument into its
     Jacobian: lane `l` of the shadow into row `j0 + l` of `jac_k`, or
     the returned derivative of a float (lane `l`) into `jac_k[j0 + l]`.

Driver parameters: the gradient's parameters without its seeds (values,
each followed by its shadow), then one pristine copy per written array,
then one Jacobian per differentiated argument (shape `out.shape +
arg.shape`, the argument's element type, C-contiguous).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
from adpasses.transforms.sweep_layout import ForwardSweeps

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


def add_jacrev_driver(module: ModuleOp, gradient: func.FuncOp, activity: Sequence[str],
                      ret_activity: Sequence[str], out: int, written: Sequence[int],
                      argnums: Sequence[int], name: str, width: int = 1) -> func.FuncOp:
    """Add `@name`, the loop over the elements of argument `out` described
    in the module docstring, calling `gradient` (built for `activity`,
    `ret_activity` and `width` lanes, without the primal). With `width` W
    (vector reverse mode) each call of the gradient serves W elements of
    `out` (row-major; the last chunk may be partial): lane l of `out`'s
    shadow is seeded at element j0 + l and lane l of each shadow (or
    derivative) fills row j0 + l of the Jacobians. Lane 0 of each shadow
    is the parameter; the other lanes are workspaces of its sizes.
    Shadows and Jacobians are C-contiguous (the caller allocates them)."""
    grad_inputs = list(gradient.function_type.inputs.data)
    n_seeds = list(ret_activity).count("active") * width
    lane_types: list[Attribute] = grad_inputs[:len(grad_inputs) - n_seeds]
    # The driver's parameters: each value, then one shadow (lane 0).
    value_types: list[Attribute] = []
    value_at, shadow_at, p, q = [], {}, 0, 0
    for k, act in enumerate(activity):
        value_at.append(p)
        value_types.append(lane_types[q])
        p, q = p + 1, q + 1
        if act in SHADOWED:
            shadow_at[k] = p
            value_types.append(lane_types[q])
            p, q = p + 1, q + width
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
    # Lanes of each shadow: the parameter, then workspaces of its sizes.
    lanes: dict[int, list[SSAValue]] = {}
    buffers: list[SSAValue] = []
    for k, at in shadow_at.items():
        lanes[k] = [params[at]]
        t = params[at].type
        own = MemRefType(t.element_type, [DYNAMIC_INDEX] * len(t.get_shape()))  # type: ignore[attr-defined]
        for _ in range(width - 1):
            alloc = memref.AllocOp(_dims(b, params[at]), [], own)
            alloc.attributes[WORKSPACE_ATTR] = UnitAttr()  # kept across calls
            buf = b.insert(alloc).results[0]
            buffers.append(buf)
            lanes[k].append(buf if own == t else b.insert(memref.CastOp.get(buf, t)).results[0])
    flat = {k: [_flat_view(b, m) for m in ms] for k, ms in lanes.items()}
    call_args: list[SSAValue] = []
    for k, act in enumerate(activity):
        call_args.append(params[value_at[k]])
        if act in SHADOWED:
            call_args += lanes[k]
    returned = [k for k, act in enumerate(activity) if act == "active"]
    seed_zero = [b.insert(arith.ConstantOp(FloatAttr(0.0, t))).result
                 for t in grad_inputs[len(grad_inputs) - n_seeds:]]
    n_out = _dims(b, flat[out][0])[0]
    # Each Jacobian as rows (one per element of out) of its argument's elements.
    rows: dict[int, tuple[SSAValue, SSAValue]] = {}
    for k, jac in zip(argnums, jacs):
        jac_flat = _flat_view(b, jac)
        if k in shadow_at:
            n_k = _dims(b, flat[k][0])[0]
            rows[k] = (jac_flat, n_k)
        else:
            rows[k] = (jac_flat, _index(b, 1))
    zero, step = _index(b, 0), _index(b, width)
    block = Block(arg_types=[IndexType()])
    b.insert(scf.ForOp(zero, at_least_one(b, n_out), step, [], Region(block)))
    j0 = block.args[0]
    inner = Builder(InsertPoint.at_end(block))
    for w, copy in zip(written, pristine):
        inner.insert(memref.CopyOp(copy, params[value_at[w]]))
    for views in flat.values():
        for v in views:
            fill(inner, v, 0.0)
    column = []
    for lane in range(width):
        j = inner.insert(arith.AddiOp(j0, _index(inner, lane))).result
        column.append((j, inner.insert(arith.CmpiOp(j, n_out, "slt")).result))
    one = inner.insert(arith.ConstantOp(FloatAttr(1.0, flat[out][0].type.element_type))).result  # type: ignore[attr-defined]
    for (j, ok), view in zip(column, flat[out]):
        _when(inner, ok, lambda tb, j=j, view=view: tb.insert(memref.StoreOp.get(one, view, [j])))
    call = inner.insert(func.CallOp(gradient.sym_name.data, call_args + seed_zero,
                                    list(gradient.function_type.outputs.data)))
    for k in argnums:
        jac_flat, n_k = rows[k]
        for lane, (j, ok) in enumerate(column):
            if k in shadow_at:
                def copy_row(tb: Builder, j: SSAValue = j, src: SSAValue = flat[k][lane],
                             jac_flat: SSAValue = jac_flat, n_k: SSAValue = n_k) -> None:
                    base = tb.insert(arith.MuliOp(j, n_k)).result

                    def store(lb: Builder, ivs: list[SSAValue]) -> None:
                        v = lb.insert(memref.LoadOp.get(src, ivs)).res
                        at = lb.insert(arith.AddiOp(base, ivs[0])).result
                        lb.insert(memref.StoreOp.get(v, jac_flat, [at]))
                    for_each_index(tb, [n_k], store)
                _when(inner, ok, copy_row)
            else:
                v = call.results[returned.index(k) * width + lane]
                _when(inner, ok, lambda tb, j=j, v=v, jac_flat=jac_flat:
                      tb.insert(memref.StoreOp.get(v, jac_flat, [j])))
    inner.insert(scf.YieldOp())
    for buf in buffers:
        dealloc = memref.DeallocOp.get(buf)
        dealloc.attributes[WORKSPACE_ATTR] = UnitAttr()
        b.insert(dealloc)
    b.insert(func.ReturnOp())
    module.body.block.add_op(driver)
    return driver


def at_least_one(b: Builder, n: SSAValue) -> SSAValue:
    """max(n, 1): the trip bound of a loop of sweeps. With no element to
    seed (an empty argument or output) one sweep still runs, every lane
    masked off (`j < n` is false: seeds, copies and results are skipped),
    so f itself runs once and its bounds checks, raises and asserts fire
    as they do under `grad`: an empty Jacobian or Hessian is never returned
    for a call that f would reject."""
    return b.insert(arith.MaxUIOp(n, _index(b, 1))).result


def _when(b: Builder, cond: SSAValue, body: Callable[[Builder], None]) -> None:
    """scf.if cond { body }."""
    then = Block()
    tb = Builder(InsertPoint.at_end(then))
    body(tb)
    tb.insert(scf.YieldOp())
    b.insert(scf.IfOp(cond, [], Region(then), Region(Block([scf.YieldOp()]))))


# -- forward sweeps: Jacobians and Hessians by tangents, `width` lanes per sweep --------


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

    when = _when

    for d, lanes in enumerate(sweeps.directions):
        n_d = _dims(b, flat[lanes[0]])[0]
        block = Block(arg_types=[IndexType()])
        b.insert(scf.ForOp(zero, at_least_one(b, n_d), step, [], Region(block)))
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
