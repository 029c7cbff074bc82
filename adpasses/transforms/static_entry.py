"""An entry of constant shapes around a driver: `hessian(f)(x)` of a small x
compiled for x's shape.

`add_static_entry(module, driver, shapes, scratch_shapes, name)` adds

    func @name(<per driver parameter but the trailing scratch ones: its type,
                with the constant sizes of `shapes` where given>)
      %s_i = memref.alloca() : memref<shape_i x T>      (per scratch buffer)
      func.call @driver(<each parameter, cast back to the driver's type>, <each %s_i, cast>)

The driver (`seed_loops.add_forward_driver(..., scratch_from_caller=True)`)
stays shape-generic; the entry fixes the sizes. Once LLVM inlines the
driver and the tangent function into it (the caller makes every other
function private), every size is a constant: the sweep loops over
elements unroll, size and bounds checks fold, and the lanes and shadows,
stack arrays of the entry's own, live in registers (SROA) instead of being
zeroed and reloaded through workspaces on every call.

Sizes are checked where the entry is called: the Python entry shim
compares each array with the constant shape of its parameter and raises
ValueError on a mismatch (docs/calling_convention.md), so no call runs
the code of another shape.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute, SSAValue
from xdsl.rewriter import InsertPoint


def constant_shape(t: Attribute, shape: tuple[int, ...] | None) -> Attribute:
    """`t` with the sizes `shape` (same element type and layout); `t` itself
    for a scalar or no shape."""
    if shape is None or not isinstance(t, MemRefType):
        return t
    if len(shape) != len(t.get_shape()):
        raise ValueError(f"static entry: shape {shape} for a parameter of type {t}: the ranks differ")
    return MemRefType(t.element_type, list(shape), t.layout, t.memory_space)


def add_static_entry(module: ModuleOp, driver: func.FuncOp, shapes: Sequence[tuple[int, ...] | None],
                     scratch_shapes: Sequence[tuple[int, ...]], name: str) -> func.FuncOp:
    """Add `@name` (module docstring): the driver's leading parameters with
    the constant `shapes` (one per parameter; None keeps its type), and its
    trailing `len(scratch_shapes)` parameters allocated on the stack with
    those shapes."""
    inputs = list(driver.function_type.inputs.data)
    n_given = len(inputs) - len(scratch_shapes)
    if len(shapes) != n_given:
        raise ValueError(f"static entry of @{driver.sym_name.data}: {len(shapes)} shapes for "
                         f"{n_given} parameters")
    entry = func.FuncOp(name, ([constant_shape(t, s) for t, s in zip(inputs, shapes)], []))
    b = Builder(InsertPoint.at_end(entry.body.block))
    operands: list[SSAValue] = [_as(b, arg, t) for arg, t in zip(entry.body.block.args, inputs)]
    for t, shape in zip(inputs[n_given:], scratch_shapes):
        buf = b.insert(memref.AllocaOp.get(t.element_type, shape=list(shape))).memref  # type: ignore[attr-defined]
        operands.append(_as(b, buf, t))
    b.insert(func.CallOp(driver.sym_name.data, operands, []))
    b.insert(func.ReturnOp())
    module.body.block.add_op(entry)
    return entry


def _as(b: Builder, value: SSAValue, t: Attribute) -> SSAValue:
    """`value` as a value of type `t` (a memref.cast to dynamic sizes)."""
    if value.type == t:
        return value
    return b.insert(memref.CastOp.get(value, t)).results[0]
