"""Arrays: element access, views (slices, `M[i]`, `M[:, j]`, `x.T`), shapes,
and local arrays (`np.zeros`, `np.ones`, `np.empty`).

Element indices follow Python: a negative index counts from the end. The
wrap-around costs a compare and a select, so it is emitted only when the
index is not provably non-negative (a non-negative literal, or the induction
variable of a `range` with non-negative start and positive step). Bounds are
checked by the LLVM lowering. Slices clamp like Python's. Positive-step
slices and integer indices of leading dimensions become `memref.subview`;
negative steps and `.T` become `memref.reinterpret_cast` over
`memref.extract_strided_metadata`.
"""

from __future__ import annotations

import ast

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    UnitAttr,
    f32,
    f64,
)
from xdsl.ir import Block, Operation, SSAValue

from adpasses.dialects.ad import PY_INDEX_ATTR, RaiseIfOp

from adpasses.frontend.values import Array, Scalar, Shape, TupleValue

DTYPE_BY_NAME = {"float64": f64, "float32": f32, "int64": IntegerType(64), "int32": IntegerType(32)}


def python_indexed(op: Operation) -> Operation:
    """Mark an access whose indices were wrapped like Python's (a negative
    index counts from the end): its bounds error reports the index as the
    user wrote it (see adpasses.dialects.ad.PY_INDEX_ATTR)."""
    op.attributes[PY_INDEX_ATTR] = UnitAttr()
    return op


def _strided(rank: int) -> StridedLayoutAttr:
    return StridedLayoutAttr([NoneAttr()] * rank, NoneAttr())


class ArrayMixin:
    lower_bounds: dict[SSAValue, int]

    # -- shape -----------------------------------------------------------------

    def dim(self, a: Array, k: int) -> SSAValue:
        size = self.emit(memref.DimOp(a.value, self.const_index(k))).results[0]
        self.lower_bounds[size] = 0
        return size

    def index_value(self, a: Array, k: int, node: ast.expr) -> SSAValue:
        """An element index for dimension k, with Python's negative wrap (skipped
        when the index is known to be non-negative: a non-negative literal, or
        a range() induction variable plus or minus constants that keep it so)."""
        value = self.expr(node)
        if self.is_array(value):
            self.error(node, "indexing with an array (x[mask], x[idx]) is not supported: its result has a "
                             "size known only at run time; for a mask write np.where(mask, x, 0.0) "
                             "(np.sum(np.where(mask, x, 0.0)) for a masked sum, np.count_nonzero(mask) for "
                             "the count), for indices a loop over them")
        if not isinstance(value, Scalar) or value.is_float:
            self.error(node, "array indices must be integers")
        idx = self.to_index(value, node)
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and node.value >= 0:
            return idx
        if self.lower_bounds.get(idx, -1) >= 0:
            return idx
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            return self.emit(arith.AddiOp(idx, self.dim(a, k))).results[0]
        negative = self.emit(arith.CmpiOp(idx, self.const_index(0), "slt")).results[0]
        wrapped = self.emit(arith.AddiOp(idx, self.dim(a, k))).results[0]
        return self.emit(arith.SelectOp(negative, wrapped, idx)).results[0]

    # -- subscripts ------------------------------------------------------------

    def subscript_items(self, node: ast.Subscript, ndim: int) -> list[ast.expr]:
        """The subscript's items, an ellipsis (`y[...]`, `X[..., 0]`)
        expanded into the full slices it stands for, as numpy does."""
        s = node.slice
        items = list(s.elts) if isinstance(s, ast.Tuple) else [s]
        dots = [k for k, i in enumerate(items) if isinstance(i, ast.Constant) and i.value is Ellipsis]
        if not dots:
            return items
        if len(dots) > 1:
            self.error(node, "an index can only have a single ellipsis ('...')")
        k = dots[0]
        fill = max(0, ndim - sum(1 for i in items if not _is_new_axis(i)) + 1)
        full = [ast.copy_location(ast.Slice(lower=None, upper=None, step=None), items[k]) for _ in range(fill)]
        return items[:k] + full + items[k + 1:]

    def load_or_view(self, a: Array, node: ast.Subscript) -> object:
        items = self.subscript_items(node, a.ndim)
        if any(_is_new_axis(i) for i in items):
            return self.with_new_axes(a, items, node)
        if len(items) > a.ndim:
            self.error(node, f"too many indices: the array has {a.ndim} dimension(s)")
        if len(items) == a.ndim and not any(isinstance(i, ast.Slice) for i in items):
            indices = [self.index_value(a, k, i) for k, i in enumerate(items)]
            op = self.emit(python_indexed(memref.LoadOp.get(a.value, indices)))
            return self.loaded(op.res)
        return self.view(a, items, node)

    def loaded(self, value: SSAValue) -> Scalar:
        """A loaded element as a Python value (a numpy scalar): ints become
        `index`."""
        t = value.type
        if isinstance(t, IntegerType) and t.width.data != 1:
            # an element of an int32 array is np.int32: an index whose arithmetic wraps to 32 bits
            return Scalar(self.emit(arith.IndexCastOp(value, IndexType())).results[0],
                          numpy=t.width.data in (32, 64), int32=t.width.data == 32)
        return Scalar(value, numpy=True)

    def store(self, a: Array, node: ast.Subscript, value: Scalar) -> None:
        items = self.subscript_items(node, a.ndim)
        if len(items) != a.ndim or any(isinstance(i, ast.Slice) for i in items):
            self.error(node, "assignment to a slice is not supported; assign elements in a loop")
        indices = [self.index_value(a, k, i) for k, i in enumerate(items)]
        stored = self.convert_to(value, a.element, node)
        self.emit(python_indexed(memref.StoreOp.get(stored, a.value, indices)))

    def with_new_axes(self, a: Array, items: list[ast.expr], node: ast.Subscript) -> Array:
        """`y[:, None]`, `x[None, :]`, `np.newaxis`: the view of the other
        items with a dimension of size 1 (stride 0) at each None."""
        rest = [i for i in items if not _is_new_axis(i)]
        if len(rest) > a.ndim:
            self.error(node, f"too many indices: the array has {a.ndim} dimension(s)")
        if len(rest) == a.ndim and not any(isinstance(i, ast.Slice) for i in rest) and rest:
            self.error(node, "x[i, None] of a single element is not supported; index the element (x[i])")
        whole = all(isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None
                    for i in rest)
        view = a if whole else self.view(a, rest, node)
        new_axes, position = [], 0
        for item in items:
            if _is_new_axis(item):
                new_axes.append(position)
                position += 1
            elif isinstance(item, ast.Slice):
                position += 1
        _, offset, sizes, strides = self._metadata(view)
        one, zero = self.const_index(1), self.const_index(0)
        for p in new_axes:
            sizes.insert(p, one)
            strides.insert(p, zero)
        return self._reinterpret(view, offset, sizes, strides)

    # -- views -------------------------------------------------------------------

    def view(self, a: Array, items: list[ast.expr], node: ast.AST) -> Array:
        items = items + [ast.Slice(None, None, None)] * (a.ndim - len(items))
        for item in items:
            if isinstance(item, ast.Slice) and item.step is not None and self.constant_index_of(item.step) == 0:
                self.error(item.step, "slice step cannot be zero")
        if any(isinstance(i, ast.Slice) and i.step is not None and not self._positive_step(i.step)
               for i in items):
            if not all(isinstance(i, ast.Slice) for i in items):
                # Integer indices first, as a checked subview (`M[7, ::-1]`
                # on 3 rows is an IndexError); then the slices, reinterpreted.
                whole = ast.Slice(None, None, None)
                a = self.view(a, [whole if isinstance(i, ast.Slice) else i for i in items], node)
                items = [i for i in items if isinstance(i, ast.Slice)]
            return self._reinterpret_view(a, items, node)
        offsets, sizes, strides, kept = [], [], [], []
        for k, item in enumerate(items):
            if isinstance(item, ast.Slice):
                start, size, step = self._slice_bounds(a, k, item)
                offsets.append(start)
                sizes.append(size)
                strides.append(step)
                kept.append(k)
            else:
                offsets.append(self.index_value(a, k, item))
                sizes.append(self.const_index(1))
                strides.append(self.const_index(1))
        result_type = MemRefType(a.element, [DYNAMIC_INDEX] * len(kept), _strided(len(kept)))
        if len(kept) == a.ndim:
            result_type = MemRefType(a.element, [DYNAMIC_INDEX] * a.ndim, _strided(a.ndim))
        static_sizes = [DYNAMIC_INDEX if k in kept else 1 for k in range(a.ndim)]
        op = memref.SubviewOp(
            a.value, offsets, [s for k, s in enumerate(sizes) if k in kept],
            strides, [DYNAMIC_INDEX] * a.ndim, static_sizes, [DYNAMIC_INDEX] * a.ndim, result_type,
        )
        return Array(self.emit(python_indexed(op)).results[0])

    def _positive_step(self, step: ast.expr) -> bool:
        return isinstance(step, ast.Constant) and isinstance(step.value, int) and step.value > 0

    def _slice_bounds(self, a: Array, k: int, s: ast.Slice) -> tuple[SSAValue, SSAValue, SSAValue]:
        """start, size, step of a positive-step slice, clamped like Python."""
        n = self.dim(a, k)
        step = self.to_index(self.scalar(s.step), s.step) if s.step is not None else self.const_index(1)
        start = self._clamp_bound(s.lower, n, default=self.const_index(0))
        stop = self._clamp_bound(s.upper, n, default=n)
        span = self.emit(arith.SubiOp(stop, start)).results[0]
        span = self.emit(arith.MaxSIOp(span, self.const_index(0))).results[0]
        size = self.emit(arith.CeilDivSIOp(span, step)).results[0]
        return start, size, step

    def _clamp_bound(self, bound: ast.expr | None, n: SSAValue, default: SSAValue) -> SSAValue:
        if bound is None:
            return default
        value = self.to_index(self.scalar(bound), bound)
        negative = self.emit(arith.CmpiOp(value, self.const_index(0), "slt")).results[0]
        wrapped = self.emit(arith.AddiOp(value, n)).results[0]
        value = self.emit(arith.SelectOp(negative, wrapped, value)).results[0]
        value = self.emit(arith.MaxSIOp(value, self.const_index(0))).results[0]
        return self.emit(arith.MinSIOp(value, n)).results[0]

    def _metadata(self, a: Array) -> tuple[SSAValue, SSAValue, list[SSAValue], list[SSAValue]]:
        md = self.emit(memref.ExtractStridedMetaDataOp(a.value))
        rank = a.ndim
        return md.results[0], md.results[1], list(md.results[2 : 2 + rank]), list(md.results[2 + rank :])

    def _reinterpret(self, a: Array, offset, sizes, strides) -> Array:  # type: ignore[no-untyped-def]
        rank = len(sizes)
        result_type = MemRefType(a.element, [DYNAMIC_INDEX] * rank, _strided(rank))
        op = memref.ReinterpretCastOp(
            a.value, [offset], list(sizes), list(strides),
            [DYNAMIC_INDEX], [DYNAMIC_INDEX] * rank, [DYNAMIC_INDEX] * rank, result_type,
        )
        return Array(self.emit(op).results[0])

    def transpose(self, a: Array) -> Array:
        if a.ndim < 2:
            return a
        _, offset, sizes, strides = self._metadata(a)
        return self._reinterpret(a, offset, sizes[::-1], strides[::-1])

    def _reinterpret_view(self, a: Array, items: list[ast.expr], node: ast.AST) -> Array:
        """Views with negative (or dynamic) steps, built from the metadata
        (`items` are all slices)."""
        _, offset, sizes, strides = self._metadata(a)
        new_sizes, new_strides = [], []
        for k, item in enumerate(items):
            n, st = sizes[k], strides[k]
            assert isinstance(item, ast.Slice)  # integer indices were taken by view()
            step = self.to_index(self.scalar(item.step), item.step) if item.step is not None else self.const_index(1)
            if item.step is not None and not (isinstance(item.step, ast.UnaryOp) and isinstance(item.step.op, ast.USub)):
                if not (isinstance(item.step, ast.Constant) and isinstance(item.step.value, int)):
                    self.error(item.step, "slice steps must be integer literals (e.g. x[::2] or x[::-1])")
            literal = self.constant_index_of(item.step) if item.step is not None else 1
            if literal is not None and literal > 0:
                # a positive step beside a negative one (`A[::-1, ::2]`, `A[::-1, :]`): Python's
                # positive-step bounds (the negative-step ones gave negative sizes: wrong sums)
                start, count = self._positive_slice(item, n, step)
            elif literal is not None:
                start, count = self._negative_slice(item, n, step)
            else:  # `-k`: its sign is known at run time only
                zero = self.emit(arith.CmpiOp(step, self.const_index(0), "eq")).results[0]
                self.emit(RaiseIfOp(zero, "ValueError", "slice step cannot be zero", []))
                up_start, up_count = self._positive_slice(item, n, step)
                down_start, down_count = self._negative_slice(item, n, step)
                up = self.emit(arith.CmpiOp(step, self.const_index(0), "sgt")).results[0]
                start = self.emit(arith.SelectOp(up, up_start, down_start)).results[0]
                count = self.emit(arith.SelectOp(up, up_count, down_count)).results[0]
            offset = self.emit(arith.AddiOp(offset, self.emit(arith.MuliOp(start, st)).results[0])).results[0]
            new_sizes.append(count)
            new_strides.append(self.emit(arith.MuliOp(st, step)).results[0])
        return self._reinterpret(a, offset, new_sizes, new_strides)

    def _positive_slice(self, s: ast.Slice, n: SSAValue, step: SSAValue) -> tuple[SSAValue, SSAValue]:
        """start and length of a positive-step slice of an axis of n elements,
        clamped like Python (`_slice_bounds`, from a size at hand)."""
        start = self._clamp_bound(s.lower, n, default=self.const_index(0))
        stop = self._clamp_bound(s.upper, n, default=n)
        span = self.emit(arith.SubiOp(stop, start)).results[0]
        span = self.emit(arith.MaxSIOp(span, self.const_index(0))).results[0]
        return start, self.emit(arith.CeilDivSIOp(span, step)).results[0]

    def _negative_slice(self, s: ast.Slice, n: SSAValue, step: SSAValue) -> tuple[SSAValue, SSAValue]:
        """start and length of a negative-step slice, as Python computes them."""
        minus_one = self.const_index(-1)
        last = self.emit(arith.SubiOp(n, self.const_index(1))).results[0]

        def bound(b: ast.expr | None, default: SSAValue) -> SSAValue:
            if b is None:
                return default
            v = self.to_index(self.scalar(b), b)
            negative = self.emit(arith.CmpiOp(v, self.const_index(0), "slt")).results[0]
            v = self.emit(arith.SelectOp(negative, self.emit(arith.AddiOp(v, n)).results[0], v)).results[0]
            v = self.emit(arith.MaxSIOp(v, minus_one)).results[0]
            return self.emit(arith.MinSIOp(v, last)).results[0]

        start = bound(s.lower, last)
        stop = bound(s.upper, minus_one)
        span = self.emit(arith.SubiOp(start, stop)).results[0]
        span = self.emit(arith.MaxSIOp(span, self.const_index(0))).results[0]
        neg_step = self.emit(arith.SubiOp(self.const_index(0), step)).results[0]
        count = self.emit(arith.CeilDivSIOp(span, neg_step)).results[0]
        return start, count

    # -- local arrays ----------------------------------------------------------------

    def allocate(self, fname: str, node: ast.Call) -> Array:
        """np.zeros/ones/empty(shape, dtype=...) and np.zeros_like/... (x)."""
        if len(node.args) != 1:
            self.error(node, f"np.{fname} takes one argument (the shape, or an array for *_like) "
                             "and an optional dtype=")
        shape_value = self.expr(node.args[0])
        element = f64
        if fname.endswith("_like"):
            if not isinstance(shape_value, Array):
                self.error(node.args[0], f"np.{fname} needs an array")
            element = shape_value.element
            shape_value = Shape(shape_value)
            fname = fname[: -len("_like")]
        if isinstance(shape_value, Shape):
            items: list[object] = [Scalar(self.dim(shape_value.array, k)) for k in range(shape_value.array.ndim)]
        else:
            items = shape_value.items if isinstance(shape_value, TupleValue) else [shape_value]
        if not all(isinstance(s, Scalar) for s in items):
            self.error(node.args[0], f"np.{fname}: the shape must be an int or a tuple of ints")
        sizes = [self.to_index(s, node.args[0]) for s in items]  # type: ignore[arg-type]
        for kw in node.keywords:
            if kw.arg != "dtype":
                self.error(node, f"np.{fname}: keyword '{kw.arg}' is not supported (only dtype=)")
            name = getattr(kw.value, "attr", None) or getattr(kw.value, "id", None)
            if isinstance(kw.value, ast.Constant):
                name = kw.value.value
            if name == "float":
                name = "float64"
            if name == "int":
                name = "int64"
            if name not in DTYPE_BY_NAME:
                self.error(kw.value, f"dtype {name!r} is not supported; use np.float64, np.float32, np.int64 or np.int32")
            element = DTYPE_BY_NAME[name]
        mtype = MemRefType(element, [DYNAMIC_INDEX] * len(sizes))
        buffer = self.emit(memref.AllocOp(sizes, [], mtype)).results[0]
        self.register_allocation(buffer)
        if fname in ("zeros", "ones"):
            fill = (self.const_float(1.0 if fname == "ones" else 0.0, element)
                    if element in (f64, f32) else self.constant_int(1 if fname == "ones" else 0, element))
            self.fill(buffer, sizes, fill)
        return Array(buffer)

    def fill(self, buffer: SSAValue, sizes: list[SSAValue], value: SSAValue) -> None:
        """buffer[...] = value, as a loop nest."""

        def nest(depth: int, indices: list[SSAValue]) -> None:
            if depth == len(sizes):
                self.emit(memref.StoreOp.get(value, buffer, indices))
                return
            block = Block(arg_types=[IndexType()])
            self.emit(scf.ForOp(self.const_index(0), sizes[depth], self.const_index(1), [], block))
            with self.inserting_at_end(block):
                nest(depth + 1, [*indices, block.args[0]])
                self.emit(scf.YieldOp())

        nest(0, [])


def _is_new_axis(item: ast.expr) -> bool:
    """None or np.newaxis in a subscript."""
    return ((isinstance(item, ast.Constant) and item.value is None)
            or (isinstance(item, ast.Attribute) and item.attr == "newaxis"))
