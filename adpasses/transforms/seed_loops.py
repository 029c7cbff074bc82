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
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

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
