"""Whole-array numpy expressions: elementwise arithmetic with numpy's
broadcasting, the op table's functions on arrays, reductions, and the
array constructors and selectors (docs/frontend.md, "Array language").

An elementwise expression is not computed operator by operator: it is an
`ArrayExpr` (values.py), the shape it broadcasts to, the arrays it reads
(its leaves) and a function that emits the scalar ops of one element.
Operators compose these functions, so `2.0 * np.exp(x) - y[:, None]` stays
one expression until something needs an array: it is then ONE
`linalg.generic` writing one freshly allocated local array (no temporary
per operator), and a reduction of it (`np.sum(np.exp(x))`) is one generic
with a reduction iterator that allocates nothing. The element function
is the scalar compiler's own arithmetic, so the type rules (NEP 50
precision, int/float promotion) are the scalar ones.

Broadcasting: shapes align to the right; sizes of one dimension combine
through `ad.broadcast` (a ValueError at run time when they do not
broadcast, with the Python location) unless they are the same size. A
leaf whose size is not that of the result in some dimension is read
through a view whose stride there is 0 when its size is 1 (numpy's own
broadcast view); leaves of lower rank get indexing maps that drop the
leading dimensions. `ad-lower-linalg` turns the generics into loops
before differentiation and before the LLVM lowering.
"""

from __future__ import annotations

import ast
import builtins
import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math, memref, scf
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from adpasses.dialects.ad import BroadcastOp, RaiseIfOp
from adpasses.frontend.values import Array, ArrayExpr, Scalar, TupleValue
from adpasses.frontend.arithmetic import int32_result
from adpasses.frontend.numbers import FLOAT_TESTS
from adpasses.ops import integer_identity_calls, python_calls

UNARY_MATH = python_calls(1)
BINARY_MATH = python_calls(2)
INTEGER_IDENTITY = integer_identity_calls()
"""np.floor/ceil/trunc where numpy returns ints unchanged (their dtype kept)."""

REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.max: "max", np.min: "min", np.amax: "max",
              np.amin: "min", np.prod: "prod", np.any: "any", np.all: "all", np.count_nonzero: "count"}
"""numpy reductions (also the methods x.sum(), x.mean(), x.max(), x.min(), x.prod(), x.any(), x.all())."""
METHODS = {"sum": "sum", "mean": "mean", "max": "max", "min": "min", "prod": "prod", "any": "any", "all": "all"}
LOGICAL = {np.logical_and: ast.BitAnd, np.logical_or: ast.BitOr, np.logical_xor: ast.BitXor}
"""np.logical_and/or/xor: the operators & | ^ on the elements' truth values."""
ARG_REDUCTIONS = {np.argmax: True, np.argmin: False}
"""np.argmax / np.argmin (and the methods x.argmax(), x.argmin()): True for max."""
ARRAY_FUNCTIONS = (*ARG_REDUCTIONS, np.where, np.clip, np.sign, np.full, np.arange, np.asarray, np.array, np.copy,
                   np.outer, np.cumsum, np.dot, np.matmul, np.linalg.norm, np.logical_not, *LOGICAL, *FLOAT_TESTS)
"""numpy functions on arrays handled here besides the op table's and the reductions."""


def _parallel(n: int) -> list[Attribute]:
    return [linalg.IteratorTypeAttr.parallel()] * n


def _dims_map(rank: int, results: Sequence[int | None]) -> AffineMapAttr:
    """(d0, ..., d<rank-1>) -> (d<r> or 0 for None, ...)."""
    exprs = tuple(AffineDimExpr(r) if r is not None else AffineConstantExpr(0) for r in results)
    return AffineMapAttr(AffineMap(rank, 0, exprs))


def same_size(a: SSAValue, b: SSAValue) -> bool:
    """Sizes known equal at compile time: one value, the same constant, or
    `memref.dim` of one memref and dimension."""
    if a is b:
        return True
    oa, ob = a.owner, b.owner
    if isinstance(oa, arith.ConstantOp) and isinstance(ob, arith.ConstantOp):
        return oa.value == ob.value
    if isinstance(oa, memref.DimOp) and isinstance(ob, memref.DimOp) and oa.source is ob.source:
        ia, ib = oa.index.owner, ob.index.owner
        return (isinstance(ia, arith.ConstantOp) and isinstance(ib, arith.ConstantOp)
                and ia.value == ib.value)
    return False


class ArrayExprMixin:
    # -- building expressions -------------------------------------------------

    def is_array(self, value: object) -> bool:
        return isinstance(value, (Array, ArrayExpr))

    def lift(self, value: Array | ArrayExpr) -> ArrayExpr:
        if isinstance(value, ArrayExpr):
            return value
        shape = [self.dim(value, k) for k in range(value.ndim)]
        return ArrayExpr(shape, [(value.value, tuple(range(value.ndim)))], lambda args: self.loaded(args[0]))

    def elementwise(self, values: Sequence[object], fn: Callable[[list[Scalar]], Scalar],
                    node: ast.AST) -> ArrayExpr:
        """fn applied element by element to `values` (arrays, array
        expressions and numbers), broadcast as numpy does."""
        lifted = [self.lift(v) if self.is_array(v) else None for v in values]
        for v, e in zip(values, lifted):
            if e is None and not isinstance(v, Scalar):
                self.error(node, "array expressions combine arrays and numbers only")
        shape: list[SSAValue] = []
        for e in lifted:
            if e is not None:
                shape = self.broadcast_shapes(shape, e.shape, node)
        rank = len(shape)
        leaves = []
        for e in lifted:
            if e is not None:
                shift = rank - e.ndim
                leaves += [(m, tuple(d + shift for d in dims)) for m, dims in e.leaves]

        def body(args: list[SSAValue]) -> Scalar:
            scalars, pos = [], 0
            for v, e in zip(values, lifted):
                if e is None:
                    scalars.append(v)
                else:
                    scalars.append(e.body(args[pos : pos + len(e.leaves)]))
                    pos += len(e.leaves)
            return fn(scalars)

        return ArrayExpr(shape, leaves, body)

    def broadcast_shapes(self, a: list[SSAValue], b: list[SSAValue], node: ast.AST,
                         mode: str = "broadcast") -> list[SSAValue]:
        rank = max(len(a), len(b))
        out = []
        with self.at(node):
            for k in range(rank):
                ia, ib = k - (rank - len(a)), k - (rank - len(b))
                if ia < 0:
                    out.append(b[ib])
                elif ib < 0 or same_size(a[ia], b[ib]):
                    out.append(a[ia])
                else:
                    out.append(self.emit(BroadcastOp(a[ia], b[ib], mode)).results[0])
        return out

    # -- computing them -------------------------------------------------------------

    def leaf_operand(self, memref_value: SSAValue, dims: tuple[int, ...], shape: list[SSAValue]) -> SSAValue:
        """The leaf as the generic reads it: itself, or a view with stride 0
        in each dimension where its size may be 1 while the result's is not."""
        leaf = Array(memref_value)
        sizes = [self.dim(leaf, k) for k in range(leaf.ndim)]
        if all(same_size(s, shape[d]) for s, d in zip(sizes, dims)):
            return memref_value
        _, offset, sizes, strides = self._metadata(leaf)
        zero, one = self.const_index(0), self.const_index(1)
        new_sizes, new_strides = [], []
        for s, st, d in zip(sizes, strides, dims):
            is_one = self.emit(arith.CmpiOp(s, one, "eq")).results[0]
            new_strides.append(self.emit(arith.SelectOp(is_one, zero, st)).results[0])
            new_sizes.append(shape[d])
        return self._reinterpret(leaf, offset, new_sizes, new_strides).value

    def ufunc_result(self, value: object) -> object:
        """What numpy's ufuncs and operators give: for a 0-d result (0-d
        arrays with numbers or other 0-d arrays) a numpy scalar, not a 0-d
        array (`np.array(1.5) + 1` is np.float64(2.5)); anything else as it is."""
        if not (isinstance(value, ArrayExpr) and value.ndim == 0):
            return value
        elements = [self.emit(memref.LoadOp.get(m, [])).results[0] for m, _ in value.leaves]
        s = value.body(elements)
        return Scalar(s.value, numpy=True, int32=s.int32)

    def storage_type(self, s: Scalar) -> Attribute:
        """The element type an array of `s` values has: an np.int32 value
        (numpy's int32 arithmetic, an element of an int32 array) is stored
        as i32, as numpy's result array is int32; other ints as i64."""
        if s.is_float:
            return s.type
        if s.is_bool:
            return i1
        return IntegerType(32) if s.int32 else IntegerType(64)

    def new_array(self, sizes: list[SSAValue], element: Attribute) -> SSAValue:
        """A local array (freed at the end of the scope that made it)."""
        buffer = self.emit(memref.AllocOp(sizes, [], MemRefType(element, [DYNAMIC_INDEX] * len(sizes)))).results[0]
        self.register_allocation(buffer)
        return buffer

    def generic_block(self, operands: list[SSAValue], fn: Callable[[list[SSAValue]], Scalar],
                      accumulate: Callable[[Scalar, Block], Scalar] | None = None,
                      element: Attribute | None = None, node: ast.AST | None = None) -> tuple[Block, Attribute]:
        """The body of a generic over `operands`: fn(elements) yielded (or
        `accumulate(value, block)`, whose last argument is the output),
        converted to `element` (by default the storage type of the value)."""
        block = Block(arg_types=[o.type.element_type for o in operands])  # type: ignore[attr-defined]
        with self.inserting_at_end(block):
            value = fn(list(block.args))
            out_type = element or self.storage_type(value)
            block.insert_arg(out_type, len(block.args))
            if accumulate is not None:
                value = accumulate(value, block)
            self.emit(linalg.YieldOp(self.convert_to(value, out_type, node)))
        return block, out_type

    def materialize(self, value: object, node: ast.AST, copy: bool = False) -> object:
        """An array expression computed into a new local array (an array
        itself unless `copy`); anything else as it is."""
        if isinstance(value, Array) and not copy:
            return value
        if not self.is_array(value):
            return value
        e = self.lift(value)  # type: ignore[arg-type]
        rank = e.ndim
        with self.at(node):
            operands = [self.leaf_operand(m, dims, e.shape) for m, dims in e.leaves]
            # A copy keeps the array's dtype (an int32 element is loaded as an index value,
            # whose storage type would be int64).
            keep = value.value.type.element_type if isinstance(value, Array) else None  # type: ignore[attr-defined]
            block, element = self.generic_block(operands, e.body, element=keep, node=node)
            out = self.new_array(e.shape, element)
            maps = [_dims_map(rank, dims) for _, dims in e.leaves] + [_dims_map(rank, range(rank))]
            self.emit(linalg.GenericOp(operands, [out], Region(block), maps, _parallel(rank)))
        return Array(out)

    # -- reductions -------------------------------------------------------------------

    def reduce(self, value: object, kind: str, axis: ast.expr | None, node: ast.AST) -> object:
        """np.sum/mean/max/min/prod(x, axis=None or k): one generic with
        reduction iterators over the (fused) expression."""
        e = self.lift(value)  # type: ignore[arg-type]
        rank = e.ndim
        axes = list(range(rank))
        if axis is not None:
            k = self.constant_index_of(axis)
            if k is None:
                self.error(axis, "axis= must be an integer literal (or None)")
            if not -rank <= k < rank:
                self.error(axis, f"axis {k} is out of bounds for array of dimension {rank}")
            axes = [k % rank]
        kept = [d for d in range(rank) if d not in axes]
        with self.at(node):
            operands = [self.leaf_operand(m, dims, e.shape) for m, dims in e.leaves]
            in_maps = [_dims_map(rank, dims) for _, dims in e.leaves]

            wide = False  # float32 values summed in float64 (set by value_of)

            def value_of(args: list[SSAValue]) -> Scalar:
                nonlocal wide
                v = e.body(args)
                if kind in ("any", "all"):
                    return Scalar(self.to_bool(v))
                if kind == "count":
                    return Scalar(self.to_index(Scalar(self.to_bool(v)), node))
                if kind in ("sum", "prod", "mean") and v.is_bool:
                    return Scalar(self.to_index(v, node))
                if kind in ("sum", "prod") and v.int32:
                    # numpy's sum and prod of int32 accumulate in int64
                    return Scalar(v.value, numpy=True)
                if kind == "mean":
                    v = Scalar(self.to_float(v, self.float_type_of(v, v)))
                if kind in ("sum", "mean") and v.type == f32:
                    # A float32 running sum stops growing at 2**24 (sum(ones(2**25)) would be
                    # 16777216, mean 0.5): numpy sums pairwise; we accumulate in float64 and
                    # round the result to float32 once (numpy's dtype, its value to rounding).
                    wide = True
                    return Scalar(self.to_float(v, f64))
                return v

            def combine(v: Scalar, block: Block) -> Scalar:
                acc = self.loaded(block.args[-1])
                if kind in ("sum", "mean", "count"):
                    return self.binary(ast.Add(), acc, v, node)
                if kind in ("any", "all"):
                    op = arith.OrIOp if kind == "any" else arith.AndIOp
                    return Scalar(self.emit(op(acc.value, v.value)).results[0])
                if kind == "prod":
                    return self.binary(ast.Mult(), acc, v, node)
                return self.running_extremum(kind == "max", acc, v, node)

            block, element = self.generic_block(operands, value_of, combine, node=node)
            sizes = [e.shape[d] for d in kept]
            if kept:
                out = self.new_array(sizes, element)
            else:
                out = self.emit(memref.AllocaOp.get(element, shape=[])).results[0]
            if kind in ("max", "min"):
                # numpy's reduction without identity: a reduced axis of size
                # 0 is a ValueError (even when the result is empty), raised
                # before the first element is read.
                empty = None
                for d in axes:
                    zero = self.emit(arith.CmpiOp(e.shape[d], self.const_index(0), "eq")).results[0]
                    empty = zero if empty is None else self.emit(arith.OrIOp(empty, zero)).results[0]
                if empty is not None:
                    operation = "maximum" if kind == "max" else "minimum"
                    self.emit(RaiseIfOp(empty, "ValueError",
                                        f"zero-size array to reduction operation {operation} which has no identity"))
                # The first element along the reduced axes.
                first_maps = [_dims_map(len(kept), [kept.index(d) if d in kept else None for d in dims])
                              for _, dims in e.leaves]
                first, _ = self.generic_block(operands, value_of, element=element, node=node)
                self.emit(linalg.GenericOp(operands, [out], Region(first),
                                           [*first_maps, _dims_map(len(kept), range(len(kept)))],
                                           _parallel(len(kept))))
            else:
                identity = 1 if kind in ("prod", "all") else 0
                init = (self.const_float(identity, element) if element in (f64, f32)
                        else self.constant(IntegerAttr(identity, element)))
                self.emit(linalg.FillOp([init], [out], []))
            iterators = [linalg.IteratorTypeAttr.reduction() if d in axes else linalg.IteratorTypeAttr.parallel()
                         for d in range(rank)]
            self.emit(linalg.GenericOp(operands, [out], Region(block),
                                       [*in_maps, _dims_map(rank, kept)], iterators))
            count_f: SSAValue | None = None
            if kind == "mean":
                count = self.const_index(1)
                for d in axes:
                    count = self.emit(arith.MuliOp(count, e.shape[d])).results[0]
                count_f = self.to_float(Scalar(count), element)

            def finish(total: SSAValue) -> Scalar:
                """The mean's division and the float32 rounding of a wide sum."""
                if count_f is not None:
                    total = self.emit(arith.DivfOp(total, count_f)).results[0]
                if wide:
                    return Scalar(self.emit(arith.TruncFOp(total, f32)).results[0], numpy=True)
                return Scalar(total, numpy=True) if count_f is not None else self.loaded(total)

            if kept:
                if count_f is None and not wide:
                    return Array(out)
                return self.materialize(self.elementwise([Array(out)], lambda s: finish(s[0].value), node), node)
            return finish(self.emit(memref.LoadOp.get(out, [])).results[0])

    def running_extremum(self, is_max: bool, acc: Scalar, v: Scalar, node: ast.AST) -> Scalar:
        """The step of a max/min reduction: `v` replaces the running value
        when it is greater (smaller) or NaN (numpy's NaN propagation: once
        the running value is NaN nothing replaces it but another NaN). A
        compare and a select rather than maximumf, so that the reverse sweep
        tapes the one-bit choice per element, not the running value."""
        if not (acc.is_float and v.is_float and acc.type == v.type):
            return self.extremum(is_max, acc, v, node)
        better = self.emit(arith.CmpfOp(v.value, acc.value, "ogt" if is_max else "olt")).results[0]
        nan = self.emit(arith.CmpfOp(v.value, v.value, "uno")).results[0]
        take = self.emit(arith.OrIOp(better, nan)).results[0]
        return Scalar(self.emit(arith.SelectOp(take, v.value, acc.value)).results[0])

    def extremum(self, is_max: bool, a: Scalar, b: Scalar, node: ast.AST) -> Scalar:
        """numpy's maximum/minimum: NaN propagates (the op table's
        np.maximum for floats; a compare and select for ints)."""
        if a.is_float or b.is_float:
            t = self.float_type_of(a, b)
            op = BINARY_MATH[np.maximum if is_max else np.minimum]
            return Scalar(self.emit(op(self.to_float(a, t), self.to_float(b, t))).results[0])
        c = self.compare(ast.Gt() if is_max else ast.Lt(), *self.unify(a, b, node), node)
        return self.numpy_select(c, a, b, node)

    def numpy_select(self, cond: SSAValue, a: Scalar, b: Scalar, node: ast.AST) -> Scalar:
        """np.where's element: `a` where `cond` else `b`, an np.int32 where
        numpy's result dtype is int32 (both int32, or one int32 and the other
        a Python int or a bool: NEP 50), so that the array is stored as int32."""
        chosen = self.select(cond, a, b, node)
        if chosen.is_int and int32_result(a, b):
            return Scalar(chosen.value, numpy=True, int32=True)
        return chosen

    # -- numpy calls on arrays ------------------------------------------------------

    def array_call(self, fn: object, node: ast.Call) -> object:
        """A numpy call with an array argument (or one of the array
        constructors); NotImplemented when it is a call on numbers, whose
        evaluated arguments are then handed to the scalar path."""
        try:
            known = (fn in UNARY_MATH or fn in BINARY_MATH or fn in REDUCTIONS or fn in ARRAY_FUNCTIONS
                     or fn in (np.abs, np.absolute, builtins.abs, np.hypot))
        except TypeError:
            return NotImplemented
        if not known:
            return NotImplemented
        if fn in (np.full, np.arange):
            return self.array_constructor(fn, node)
        args = [self.expr(a) for a in node.args]
        if not any(self.is_array(a) for a in args) or fn is builtins.abs and not self.is_array(args[0]):
            self.pre_evaluated.update({id(a): v for a, v in zip(node.args, args)})
            return NotImplemented
        keywords = {kw.arg: kw.value for kw in node.keywords}
        if fn in REDUCTIONS:
            self._expect(node, 1, keywords, ("axis",))
            return self.reduce(args[0], REDUCTIONS[fn], keywords.get("axis"), node)
        if fn in ARG_REDUCTIONS:
            self._expect(node, 1)
            return self.arg_extremum(args[0], ARG_REDUCTIONS[fn], node)
        if keywords:
            self.error(node, f"{_name(fn)} on arrays takes no keyword arguments here; pass them by position")
        if fn in UNARY_MATH:
            self._expect(node, 1)
            if getattr(fn, "__module__", None) == "math":
                self.error(node, f"math.{fn.__name__} takes a number, not an array; use np.{fn.__name__} "
                                 "for arrays")
            op = UNARY_MATH[fn]

            def unary(s: list[Scalar]) -> Scalar:
                if fn in INTEGER_IDENTITY and not s[0].is_float:
                    return s[0]  # np.floor of an int32 array is that int32 array (a new one)
                if s[0].is_bool:
                    self.error(node, f"{_name(fn)} of a bool array is not supported (numpy computes it in "
                                     "float16, which compiled code does not have); convert it with "
                                     "np.where(mask, 1.0, 0.0)")
                return Scalar(self.emit(op(self.to_float(s[0], self.float_type_of(s[0], s[0])))).results[0])

            return self.ufunc_result(self.elementwise(args, unary, node))
        if fn in BINARY_MATH or fn is np.hypot:
            self._expect(node, 2)
            if fn is np.hypot:
                return self.ufunc_result(self.elementwise(args, lambda s: self._hypot(s), node))
            op = BINARY_MATH[fn]

            def binary(s: list[Scalar]) -> Scalar:
                if fn in (np.maximum, np.minimum) and not (s[0].is_float or s[1].is_float):
                    return self.extremum(fn is np.maximum, s[0], s[1], node)  # of ints an int, as numpy's
                t = self.float_type_of(s[0], s[1])
                return Scalar(self.emit(op(self.to_float(s[0], t), self.to_float(s[1], t))).results[0])

            return self.ufunc_result(self.elementwise(args, binary, node))
        if fn in (np.abs, np.absolute, builtins.abs):
            self._expect(node, 1)
            return self.ufunc_result(self.elementwise(args, lambda s: self.absolute(s[0]), node))
        if fn in FLOAT_TESTS:
            self._expect(node, 1)
            return self.ufunc_result(self.elementwise(args, lambda s: self.float_test_of(FLOAT_TESTS[fn], s[0]),
                                                      node))
        if fn is np.logical_not:
            self._expect(node, 1)
            return self.ufunc_result(self.elementwise(args, lambda s: self.logical_not(s[0]), node))
        if fn in LOGICAL:
            self._expect(node, 2)
            return self.ufunc_result(self.elementwise(args, lambda s: self.binary(
                LOGICAL[fn](), Scalar(self.to_bool(s[0])), Scalar(self.to_bool(s[1])), node), node))
        if fn is np.where:
            self._expect(node, 3)
            return self.elementwise(args, lambda s: self.numpy_select(self.to_bool(s[0]), s[1], s[2], node), node)
        if fn is np.clip:
            self._expect(node, 3)
            return self.elementwise(args, lambda s: self.extremum(
                False, self.extremum(True, s[0], s[1], node), s[2], node), node)
        if fn is np.sign:
            self._expect(node, 1)
            return self.elementwise(args, lambda s: self.sign(s[0], node), node)
        if fn in (np.asarray, np.array, np.copy):
            self._expect(node, 1)
            return self.materialize(args[0], node, copy=fn is not np.asarray)
        if fn is np.outer:
            self._expect(node, 2)
            return self.outer(args, node)
        if fn is np.cumsum:
            self._expect(node, 1)
            return self.cumsum(args[0], node)
        if fn is np.dot:
            self._expect(node, 2)
            return self.dot(args, node)
        if fn is np.matmul:
            self._expect(node, 2)
            return self.matmul(args[0], args[1], node)
        if fn is np.linalg.norm:
            self._expect(node, 1)
            squares = self.elementwise(args, lambda s: self.binary(ast.Mult(), s[0], s[0], node), node)
            total = self.reduce(squares, "sum", None, node)
            return Scalar(self.emit(math.SqrtOp(self.to_float(total, self.float_type_of(total, total)))).results[0],
                          numpy=True)
        return NotImplemented

    def array_method(self, base: object, method: str, node: ast.Call) -> object:
        """x.sum(), x.mean(), x.max(), x.min(), x.prod(), x.any(), x.all() (axis=), x.copy(), x.dot(y)."""
        keywords = {kw.arg: kw.value for kw in node.keywords}
        if method in METHODS:
            if len(node.args) > 1:
                self.error(node, f".{method}() takes at most one argument (the axis)")
            axis = node.args[0] if node.args else keywords.get("axis")
            if set(keywords) - {"axis"}:
                self.error(node, f".{method}(): only the keyword axis= is supported")
            return self.reduce(base, METHODS[method], axis, node)
        if keywords:
            self.error(node, f".{method}() takes no keyword arguments here")
        if method == "copy":
            if node.args:
                self.error(node, ".copy() takes no arguments here")
            return self.materialize(base, node, copy=True)
        if method == "dot":
            if len(node.args) != 1:
                self.error(node, ".dot() takes one argument")
            return self.dot([base, self.expr(node.args[0])], node)
        if method in ("argmax", "argmin"):
            if node.args:
                self.error(node, f".{method}() takes no arguments here (axis= is not supported)")
            return self.arg_extremum(base, method == "argmax", node)
        self.error(node, f"array method .{method}() is not supported; the supported methods are .sum(), "
                         ".mean(), .max(), .min(), .prod(), .any(), .all(), .argmax(), .argmin(), .copy() "
                         "and .dot()")

    def arg_extremum(self, value: object, is_max: bool, node: ast.AST) -> Scalar:
        """np.argmax / np.argmin of a vector, numpy's: the index (an
        np.int64) of the first greatest (smallest) element, the first NaN
        if there is one (NaN propagates as in np.max); an empty vector is
        numpy's ValueError. One scf.for carrying the best value and index."""
        name = "argmax" if is_max else "argmin"
        if not self.is_array(value):
            self.error(node, f"np.{name} takes an array here")
        if self.lift(value).ndim != 1:  # type: ignore[arg-type]
            self.error(node, f"np.{name} is supported for 1-D arrays (the index into the flattened array of "
                             f"more dimensions is not); loop over the rows, or call it on a row x[i]")
        x = self.materialize(value, node)
        assert isinstance(x, Array)
        with self.at(node):
            n = self.dim(x, 0)
            zero, one = self.const_index(0), self.const_index(1)
            empty = self.emit(arith.CmpiOp(n, zero, "eq")).results[0]
            self.emit(RaiseIfOp(empty, "ValueError", f"attempt to get {name} of an empty sequence"))
            first = self.emit(memref.LoadOp.get(x.value, [zero])).results[0]
            block = Block(arg_types=[IndexType(), first.type, IndexType()])
            loop = self.emit(scf.ForOp(one, n, one, [first, zero], block))
            with self.inserting_at_end(block):
                i, best, where = block.args
                v = self.emit(memref.LoadOp.get(x.value, [i])).results[0]
                a, b = self.loaded(v), self.loaded(best)
                if a.is_float:
                    better = self.emit(arith.CmpfOp(v, best, "ogt" if is_max else "olt")).results[0]
                    # the first NaN wins: v is NaN and the best so far is not
                    nan_v = self.emit(arith.CmpfOp(v, v, "uno")).results[0]
                    nan_best = self.emit(arith.CmpfOp(best, best, "uno")).results[0]
                    first_nan = self.emit(arith.AndIOp(nan_v, self.emit(arith.XOrIOp(
                        nan_best, self.const_bool(True))).results[0])).results[0]
                    better = self.emit(arith.OrIOp(better, first_nan)).results[0]
                    better = self.emit(arith.AndIOp(better, self.emit(arith.XOrIOp(
                        nan_best, self.const_bool(True))).results[0])).results[0]
                else:
                    better = self.compare(ast.Gt() if is_max else ast.Lt(), a, b, node)
                self.emit(scf.YieldOp(self.emit(arith.SelectOp(better, v, best)).results[0],
                                      self.emit(arith.SelectOp(better, i, where)).results[0]))
        return Scalar(loop.results[1], numpy=True)

    def _expect(self, node: ast.Call, n: int, keywords: dict | None = None, allowed: tuple = ()) -> None:
        if len(node.args) != n:
            self.error(node, f"{_name_of(node)} takes {n} positional argument(s) here, got {len(node.args)}")
        for k in keywords or {}:
            if k not in allowed:
                self.error(node, f"{_name_of(node)}: keyword '{k}' is not supported"
                                 + (f" (only {', '.join(a + '=' for a in allowed)})" if allowed else ""))

    # -- element functions --------------------------------------------------------------

    def logical_not(self, a: Scalar) -> Scalar:
        return Scalar(self.emit(arith.XOrIOp(self.to_bool(a), self.const_bool(True))).results[0])

    def absolute(self, a: Scalar) -> Scalar:
        if a.is_float:
            return Scalar(self.emit(math.AbsFOp(a.value)).results[0], a.weak)
        return self.int_abs(Scalar(self.to_index(a, None), numpy=a.numpy, int32=a.int32))

    def sign(self, a: Scalar, node: ast.AST) -> Scalar:
        """numpy's sign: -1, 0 or 1 (NaN stays NaN); its derivative is 0."""
        if not a.is_float:
            x = self.to_index(a, node)
            zero = self.const_index(0)
            pos = self.emit(arith.CmpiOp(x, zero, "sgt")).results[0]
            neg = self.emit(arith.CmpiOp(x, zero, "slt")).results[0]
            return self.binary(ast.Sub(), Scalar(pos), Scalar(neg), node)
        t = a.type
        zero = self.const_float(0.0, t)
        pos = self.emit(arith.CmpfOp(a.value, zero, "ogt")).results[0]
        neg = self.emit(arith.CmpfOp(a.value, zero, "olt")).results[0]
        rest = self.emit(arith.MulfOp(a.value, zero)).results[0]  # 0, or NaN for NaN
        inner = self.emit(arith.SelectOp(neg, self.const_float(-1.0, t), rest)).results[0]
        return Scalar(self.emit(arith.SelectOp(pos, self.const_float(1.0, t), inner)).results[0])

    def _hypot(self, s: list[Scalar]) -> Scalar:
        t = self.float_type_of(s[0], s[1])
        x, y = self.to_float(s[0], t), self.to_float(s[1], t)
        xx = self.emit(arith.MulfOp(x, x)).results[0]
        yy = self.emit(arith.MulfOp(y, y)).results[0]
        return Scalar(self.emit(math.SqrtOp(self.emit(arith.AddfOp(xx, yy)).results[0])).results[0])

    # -- products -----------------------------------------------------------------------

    def dot(self, args: list[object], node: ast.AST) -> object:
        a, b = args
        if not (self.is_array(a) and self.is_array(b)):
            return self.elementwise(args, lambda s: self.binary(ast.Mult(), s[0], s[1], node), node)
        ea, eb = self.lift(a), self.lift(b)  # type: ignore[arg-type]
        if ea.ndim > 2 or eb.ndim > 2:
            self.error(node, "np.dot is supported for vectors and matrices (1-D and 2-D arrays); for "
                             "more dimensions write a loop over the leading ones")
        if ea.ndim == 2 or eb.ndim == 2:
            return self.matmul(a, b, node, "np.dot")
        return self.vector_dot(ea, eb, node)

    def vector_dot(self, ea: ArrayExpr, eb: ArrayExpr, node: ast.AST) -> object:
        """sum(a * b) of two vectors of one length: one reduction. The
        lengths are checked equal first: numpy's "not aligned" error, not
        the elementwise product's broadcast error (which then never fires)."""
        widths = {_element_width(leaf) for e in (ea, eb) for leaf, _ in e.leaves}
        if widths == {1}:
            self.error(node, "the dot product of two bool vectors is not supported (numpy's result is a "
                             "bool: any of the ands); write np.any(a & b), or convert one with "
                             "np.where(x, 1, 0)")
        shape = self.broadcast_shapes(ea.shape, eb.shape, node, mode="equal")
        product = self.elementwise([ea, eb], lambda s: self.binary(ast.Mult(), s[0], s[1], node), node)
        product.shape = shape
        total = self.reduce(product, "sum", None, node)
        if isinstance(total, Scalar) and total.is_int and 32 in widths and widths <= {1, 32}:
            # numpy's dot of int32 vectors (or int32 and bool) accumulates in
            # int32 (np.sum in int64): the int64 sum wrapped once has the same bits
            return self.as_int32(total.value)
        return total

    def matmul(self, a: object, b: object, node: ast.AST, what: str = "matmul") -> object:
        """`a @ b` (np.matmul, np.dot) of matrices and vectors, numpy's
        rules: a vector on the left is a row, on the right a column, and
        that dimension is dropped from the result (vector @ vector: their
        dot product, a number). Matrix operands become ONE
        `linalg.matmul` into a freshly allocated zeroed result (vectors
        enter as 1 x k / k x 1 views, so a matrix-vector product is a
        matmul with n = 1). The shared dimension is checked at run time:
        numpy's ValueError with the Python location, also with
        `boundscheck=False`."""
        symbol = "@" if what == "matmul" else what
        for v in (a, b):
            if not self.is_array(v):
                self.error(node, f"{symbol}: both operands must be arrays (vectors or matrices); "
                                 "multiply by a number with *")
        ea, eb = self.lift(a), self.lift(b)  # type: ignore[arg-type]
        for e in (ea, eb):
            if e.ndim not in (1, 2):
                self.error(node, f"{symbol} is supported for vectors and matrices (1-D and 2-D arrays), "
                                 f"not {e.ndim}-D ones; for a stack of matrices write a loop over the "
                                 "leading dimension")
        if ea.ndim == 1 and eb.ndim == 1:
            return self.vector_dot(ea, eb, node)
        x, y = self.materialize(a, node), self.materialize(b, node)
        assert isinstance(x, Array) and isinstance(y, Array)
        if x.element == i1 and y.element == i1:
            self.error(node, f"{symbol} of two bool arrays is not supported (numpy's result is a bool "
                             "array of any-of-ands); convert one operand to ints with np.where(x, 1, 0) or "
                             "write the loops")
        floats = [v.element for v in (x, y) if v.element in (f64, f32)]
        if len(floats) < 2 and not (len(floats) == 1 and i1 in (x.element, y.element)):
            if not floats:
                return self._integer_matmul(x, y, symbol, what, node)
            # numpy: an int32 or int64 array with a float32 one gives float64
            floats = [f64]
        element = f64 if f64 in floats else f32
        with self.at(node):
            x, y = (self._as_element(v, element, node) for v in (x, y))
            self._check_inner_sizes(x, y, what)
            sizes = ([self.dim(x, 0)] if x.ndim == 2 else []) + ([self.dim(y, 1)] if y.ndim == 2 else [])
            out = self.new_array(sizes, element)
            zero = self.const_float(0.0, element)
            self.emit(linalg.FillOp([zero], [out], []))
            lhs = x if x.ndim == 2 else self._vector_as_matrix(x, row=True)
            rhs = y if y.ndim == 2 else self._vector_as_matrix(y, row=False)
            target = Array(out) if len(sizes) == 2 else self._vector_as_matrix(Array(out), row=x.ndim == 1)
            self.emit(linalg.MatmulOp([lhs.value, rhs.value], [target.value]))
        return Array(out)

    def _check_inner_sizes(self, x: Array, y: Array, what: str) -> None:
        k_x, k_y = self.dim(x, x.ndim - 1), self.dim(y, 0)
        if not same_size(k_x, k_y):
            differ = self.emit(arith.CmpiOp(k_x, k_y, "ne")).results[0]
            message = (f"shapes not aligned: {{1}} (dim {x.ndim - 1}) != {{0}} (dim 0)" if what == "np.dot"
                       else "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                            "signature (n?,k),(k,m?)->(n?,m?) (size {0} is different from {1})")
            self.emit(RaiseIfOp(differ, "ValueError", message, [k_y, k_x]))

    def _integer_matmul(self, x: Array, y: Array, symbol: str, what: str, node: ast.AST) -> Array:
        """A matrix product of int arrays (int32, int64, bool with an int),
        numpy's dtype: int32 with int32 (or bool) is int32 and wraps, as
        numpy's int32 accumulation does (each step is the scalar int32
        arithmetic: the same bits as wrapping once); int64 otherwise. One
        linalg.generic (i, j, k) with k a reduction: linalg.matmul is
        lowered for floats (BLAS or the vectorised nest)."""
        with self.at(node):
            self._check_inner_sizes(x, y, what)
            sizes = ([self.dim(x, 0)] if x.ndim == 2 else []) + ([self.dim(y, 1)] if y.ndim == 2 else [])
            lhs = x if x.ndim == 2 else self._vector_as_matrix(x, row=True)
            rhs = y if y.ndim == 2 else self._vector_as_matrix(y, row=False)

            def product(els: list[SSAValue]) -> Scalar:
                return self.binary(ast.Mult(), self.loaded(els[0]), self.loaded(els[1]), node)

            def accumulate(v: Scalar, block: Block) -> Scalar:
                return self.binary(ast.Add(), self.loaded(block.args[-1]), v, node)

            block, element = self.generic_block([lhs.value, rhs.value], product, accumulate, node=node)
            out = self.new_array(sizes, element)
            self.emit(linalg.FillOp([self.constant(IntegerAttr(0, element))], [out], []))
            target = Array(out) if len(sizes) == 2 else self._vector_as_matrix(Array(out), row=x.ndim == 1)
            maps = [AffineMapAttr(AffineMap(3, 0, (AffineDimExpr(0), AffineDimExpr(2)))),
                    AffineMapAttr(AffineMap(3, 0, (AffineDimExpr(2), AffineDimExpr(1)))),
                    AffineMapAttr(AffineMap(3, 0, (AffineDimExpr(0), AffineDimExpr(1))))]
            iterators = [linalg.IteratorTypeAttr.parallel(), linalg.IteratorTypeAttr.parallel(),
                         linalg.IteratorTypeAttr.reduction()]
            self.emit(linalg.GenericOp([lhs.value, rhs.value], [target.value], Region(block), maps, iterators))
        return Array(out)

    def _as_element(self, v: Array, element: Attribute, node: ast.AST) -> Array:
        if v.element == element:
            return v
        converted = self.materialize(self.elementwise([v], lambda s: Scalar(self.to_float(s[0], element)),
                                                      node), node)
        assert isinstance(converted, Array)
        return converted

    def _vector_as_matrix(self, v: Array, row: bool) -> Array:
        """A 1 x n (row) or n x 1 (column) view of the vector `v`. The stride
        of the size-1 dimension is free; it is chosen so that BLAS takes
        the view (a row with unit stride along it and 1 across: column-major
        to BLAS, which reads it with the transpose flag)."""
        _, offset, sizes, strides = self._metadata(v)
        one = self.const_index(1)
        if row:
            return self._reinterpret(v, offset, [one, sizes[0]], [one, strides[0]])
        return self._reinterpret(v, offset, [sizes[0], one], [strides[0], one])

    def outer(self, args: list[object], node: ast.AST) -> object:
        a, b = args
        if not (self.is_array(a) and self.is_array(b)):
            self.error(node, "np.outer takes two arrays")
        ea, eb = self.lift(a), self.lift(b)  # type: ignore[arg-type]
        if ea.ndim != 1 or eb.ndim != 1:
            self.error(node, "np.outer is supported for two vectors (1-D arrays)")
        rows = ArrayExpr([ea.shape[0]], [(m, (0,)) for m, _ in ea.leaves], ea.body)
        cols = ArrayExpr([eb.shape[0]], [(m, (1,)) for m, _ in eb.leaves], eb.body)
        shape = [ea.shape[0], eb.shape[0]]
        leaves = rows.leaves + cols.leaves
        n = len(rows.leaves)
        return ArrayExpr(shape, leaves, lambda args: self.binary(
            ast.Mult(), rows.body(args[:n]), cols.body(args[n:]), node))

    def cumsum(self, value: object, node: ast.AST) -> Array:
        """A loop carrying the running sum (a scan is neither a parallel
        nor a reduction iterator of linalg.generic)."""
        if not self.is_array(value):
            self.error(node, "np.cumsum takes an array")
        x = self.materialize(value, node)
        assert isinstance(x, Array)
        if x.ndim != 1:
            self.error(node, "np.cumsum is supported for 1-D arrays")
        with self.at(node):
            n = self.dim(x, 0)
            element = x.element if x.element in (f64, f32) else IntegerType(64)
            out = self.new_array([n], element)
            zero = self.const_float(0.0, element) if element in (f64, f32) else self.constant(IntegerAttr(0, element))
            block = Block(arg_types=[IndexType(), element])
            loop = self.emit(scf.ForOp(self.const_index(0), n, self.const_index(1), [zero], block))
            with self.inserting_at_end(block):
                v = self.loaded(self.emit(memref.LoadOp.get(x.value, [block.args[0]])).results[0])
                total = self.binary(ast.Add(), self.loaded(block.args[1]), v, node)
                stored = self.convert_to(total, element, node)
                self.emit(memref.StoreOp.get(stored, out, [block.args[0]]))
                self.emit(scf.YieldOp(stored))
            loop.results[0].name_hint = "cumsum"
        return Array(out)

    # -- constructors -----------------------------------------------------------------------

    def array_constructor(self, fn: object, node: ast.Call) -> Array:
        keywords = {kw.arg: kw.value for kw in node.keywords}
        if set(keywords) - {"dtype"}:
            self.error(node, f"{_name(fn)}: only the keyword dtype= is supported")
        dtype = self.dtype_of(keywords["dtype"]) if "dtype" in keywords else None
        if fn is np.full:
            if len(node.args) != 2:
                self.error(node, "np.full takes a shape and a fill value (and dtype=)")
            sizes = self.shape_sizes(self.expr(node.args[0]), node.args[0], "np.full")
            fill = self.scalar(node.args[1])
            element = dtype or self.storage_type(fill)
            with self.at(node):
                out = self.new_array(sizes, element)
                self.emit(linalg.FillOp([self.convert_to(fill, element, node)], [out], []))
            return Array(out)
        # np.arange(stop), (start, stop), (start, stop, step)
        if not 1 <= len(node.args) <= 3:
            self.error(node, "np.arange takes stop, or start, stop[, step]")
        values = [self.scalar(a) for a in node.args]
        if len(values) == 1:
            values = [Scalar(self.const_index(0)), values[0]]
        if len(values) == 2:
            values.append(Scalar(self.const_index(1)))
        start, stop, step = values
        is_float = any(v.is_float for v in values) or dtype in (f64, f32)
        with self.at(node):
            if is_float:
                t = dtype if dtype in (f64, f32) else f64
                span = self.binary(ast.Div(), self.binary(ast.Sub(), stop, start, node), step, node)
                count_f = self.emit(math.CeilOp(self.to_float(span, f64))).results[0]
                count_f = self.emit(arith.MaximumfOp(count_f, self.const_float(0.0))).results[0]
                count = self.to_index(self.float_to_int(count_f), node)
                element = t
            else:
                x0, x1, dx = (self.to_index(v, node) for v in values)
                span = self.emit(arith.SubiOp(x1, x0)).results[0]
                count = self.emit(arith.CeilDivSIOp(span, dx)).results[0]
                count = self.emit(arith.MaxSIOp(count, self.const_index(0))).results[0]
                element = dtype or IntegerType(64)
            out = self.new_array([count], element)
            block = Block(arg_types=[element])
            with self.inserting_at_end(block):
                i = Scalar(self.emit(linalg.IndexOp(0)).results[0])
                value = self.binary(ast.Add(), start, self.binary(ast.Mult(), i, step, node), node)
                self.emit(linalg.YieldOp(self.convert_to(value, element, node)))
            self.emit(linalg.GenericOp([], [out], Region(block), [_dims_map(1, [0])], _parallel(1)))
        return Array(out)

    def float_to_int(self, value: SSAValue) -> Scalar:
        i64 = self.emit(arith.FPToSIOp(value, IntegerType(64))).results[0]
        return Scalar(self.emit(arith.IndexCastOp(i64, IndexType())).results[0])

    def shape_sizes(self, value: object, node: ast.AST, what: str) -> list[SSAValue]:
        from adpasses.frontend.values import Shape

        if isinstance(value, Shape):
            return [self.dim(value.array, k) for k in range(value.array.ndim)]
        items = value.items if isinstance(value, TupleValue) else [value]
        if not all(isinstance(s, Scalar) for s in items):
            self.error(node, f"{what}: the shape must be an int or a tuple of ints")
        return [self.to_index(s, node) for s in items]  # type: ignore[arg-type]

    def dtype_of(self, node: ast.expr) -> Attribute:
        from adpasses.frontend.arrays import DTYPE_BY_NAME

        name = getattr(node, "attr", None) or getattr(node, "id", None)
        if isinstance(node, ast.Constant):
            name = node.value
        name = {"float": "float64", "int": "int64"}.get(name, name)
        if name not in DTYPE_BY_NAME:
            self.error(node, f"dtype {name!r} is not supported; use np.float64, np.float32, np.int64 or np.int32")
        return DTYPE_BY_NAME[name]

    # -- operators --------------------------------------------------------------------------

    def array_binary(self, op: ast.operator, a: object, b: object, node: ast.AST) -> object:
        if isinstance(op, ast.MatMult):
            return self.matmul(a, b, node)
        return self.ufunc_result(self.elementwise([a, b], lambda s: self.element_binary(op, s[0], s[1], node), node))

    def element_binary(self, op: ast.operator, a: Scalar, b: Scalar, node: ast.AST) -> Scalar:
        """One element of `a op b` on arrays. numpy's bool arithmetic differs
        from Python's (True + True is True: + is or, * is and; - raises)."""
        if a.is_bool and b.is_bool and isinstance(op, (ast.Add, ast.Mult, ast.Sub)):
            if isinstance(op, ast.Sub):
                self.error(node, "numpy boolean subtract, the `-` operator, is not supported (numpy raises "
                                 "TypeError); use the ^ operator or np.logical_xor")
            logical = arith.OrIOp if isinstance(op, ast.Add) else arith.AndIOp
            return Scalar(self.emit(logical(a.value, b.value)).results[0])
        return self.binary(op, a, b, node)

    def array_compare(self, op: ast.cmpop, a: object, b: object, node: ast.AST) -> object:
        return self.ufunc_result(self.elementwise([a, b], lambda s: Scalar(self.compare(op, s[0], s[1], node)), node))

    def update_in_place(self, target: Array, op: ast.operator, value: object, node: ast.AST) -> None:
        """`x += y` (any operator) on an array: one generic that reads and
        writes x; y broadcasts into x's shape (numpy: a ValueError when it
        does not fit), and the result is converted to x's dtype."""
        shape = [self.dim(target, k) for k in range(target.ndim)]
        root = self.memory_root(target.value)  # type: ignore[attr-defined]
        if self.is_array(value) and any(m is not target.value and self.memory_root(m) is root  # type: ignore[attr-defined]
                                        for m, _ in self.lift(value).leaves):  # type: ignore[arg-type]
            # `x += x[::-1]`: the right side reads elements of x that the
            # update writes first; numpy computes it before writing, so do we.
            # Also through a callee's result that is a view of x (`r =
            # flip(x); x += r`: fuzz arrays seed 23), hence memory_root.
            value = self.materialize(value, node, copy=True)
        if self.is_array(value):
            e = self.lift(value)  # type: ignore[arg-type]
            if e.ndim > target.ndim:
                self.error(node, f"a {e.ndim}-D array cannot be broadcast into the {target.ndim}-D array "
                                 "updated in place")
            self.broadcast_shapes(e.shape, shape[target.ndim - e.ndim:], node, mode="into")
            shift = target.ndim - e.ndim
            leaves = [(m, tuple(d + shift for d in dims)) for m, dims in e.leaves]
            body = e.body
        elif isinstance(value, Scalar):
            leaves, body = [], (lambda args, v=value: v)
        else:
            self.error(node, "an array can be updated in place with an array or a number")
        rank = target.ndim
        element = target.element

        def update(copies: dict[SSAValue, SSAValue]) -> None:
            # A copy of the target (its elements share memory) is read in
            # place of the elements written, as an input before the output.
            own = copies.get(target.value)

            def accumulate(v: Scalar, block: Block) -> Scalar:
                return self.binary(op, self.loaded(block.args[-2 if own is not None else -1]), v, node)

            with self.at(node):
                operands = [self.leaf_operand(copies.get(m, m), dims, shape) for m, dims in leaves]
                maps = [_dims_map(rank, dims) for _, dims in leaves] + [_dims_map(rank, range(rank))]
                if own is not None:
                    operands.append(own)
                    maps.append(_dims_map(rank, range(rank)))
                n = len(leaves)
                block, _ = self.generic_block(operands, lambda args: body(args[:n]), accumulate, element=element,
                                              node=node)
                self.emit(linalg.GenericOp(operands, [target.value], Region(block), maps, _parallel(rank)))

        # Another argument may be the target's memory (`f(x, x)`), or the
        # target's elements each other's (a stride of 0): tested per call,
        # copied first only when they are (frontend/overlap.py).
        unknown = [m for m, _ in leaves if self.overlap_unknown(m, target.value)]  # type: ignore[attr-defined]
        self.overlap_guarded(target.value, unknown, update, node,  # type: ignore[attr-defined]
                             itself=self.may_overlap_itself(target.value))  # type: ignore[attr-defined]


def _name(fn: object) -> str:
    name = getattr(fn, "__name__", str(fn))
    return f"np.{name}" if getattr(np, name, None) is fn else name


def _name_of(node: ast.Call) -> str:
    try:
        return ast.unparse(node.func)
    except Exception:  # noqa: BLE001
        return "the function"


__all__ = ["ArrayExprMixin", "same_size", "REDUCTIONS", "METHODS"]
_ = pymath  # math functions on arrays are rejected by name (array_call)


def _element_width(memref_value: SSAValue) -> int | None:
    """The bit width of an integer memref's elements (None otherwise)."""
    element = getattr(memref_value.type, "element_type", None)
    return element.width.data if isinstance(element, IntegerType) else None
